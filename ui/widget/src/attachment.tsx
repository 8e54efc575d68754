// A message's attachment in the chat panel.
import { useEffect, useState } from 'preact/hooks';
import { fileBlobUrl, fileSize, isImage, type VisitorAttachment } from './files';
import type { Widget } from './host';

/** An image as a thumbnail (a link to the full picture), any other file as a download link. */
export function FileView({ widget, attachment }: { widget: Widget; attachment: VisitorAttachment }) {
  const [url, setUrl] = useState<string | null>(null);
  const [broken, setBroken] = useState(false);
  const image = isImage(attachment.content_type) && !broken;
  useEffect(() => {
    let live = true;
    fileBlobUrl(widget.client, attachment).then(
      (u) => live && setUrl(u),
      () => live && setBroken(true),
    );
    return () => {
      live = false;
    };
  }, [attachment.id]);
  const label = `${attachment.filename} (${fileSize(attachment.size)})`;
  return (
    <a
      class={image ? 'file thumb' : 'file'}
      href={url ?? undefined}
      download={image ? undefined : attachment.filename}
      target="_blank"
      rel="noopener"
      title={label}
    >
      {image && url ? <img src={url} alt={attachment.filename} onError={() => setBroken(true)} /> : label}
    </a>
  );
}
