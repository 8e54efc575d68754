// What a message shows: its text with the quoted part of a mail folded away, its HTML in a frame
// sized to the mail, and its files (images open in a preview, the rest download).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Message } from '../api';
import { Dialog } from '../components/Dialog';
import { t } from '../i18n';

/**
 * An HTML mail in a frame that runs nothing (no allow-scripts) but is same-origin, so its height
 * follows its content and mail wider than the pane (a 600 px newsletter) is scaled down to fit.
 */
export function MailFrame(props: { src: string; title: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const width = useRef(-1);
  // The frame is as tall as the mail: measured at 1 px high (the page's own height never counts, so
  // setting the height cannot feed back into the next measure), then set; mail wider than the pane
  // is scaled down to it.
  const fit = () => {
    const el = frame.current;
    const doc = el?.contentDocument;
    if (!el || !doc?.body) return;
    const root = doc.documentElement;
    root.style.overflow = 'hidden';
    doc.body.style.margin = '8px';
    doc.body.style.zoom = '';
    el.style.height = '1px';
    const wide = root.scrollWidth;
    const room = el.clientWidth;
    if (wide > room + 1) doc.body.style.zoom = String(room / wide);
    el.style.height = `${Math.ceil(root.scrollHeight)}px`;
  };
  useEffect(() => {
    const el = frame.current;
    if (!el) return;
    // Only a new width changes the layout inside; the height is ours.
    const resized = new ResizeObserver(() => {
      if (el.clientWidth === width.current) return;
      width.current = el.clientWidth;
      fit();
    });
    resized.observe(el);
    return () => resized.disconnect();
  }, []);
  return (
    <iframe
      ref={frame}
      class="mail-frame"
      sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"
      src={props.src}
      title={props.title}
      onLoad={() => {
        fit();
        // Images that arrive after the page (a remote banner once asked for) change its height.
        for (const img of Array.from(frame.current?.contentDocument?.images ?? [])) if (!img.complete) img.addEventListener('load', fit, { once: true });
      }}
    />
  );
}

const ATTRIBUTION = /^(On .{4,300} wrote:|.{4,300} tarihinde .{0,300}yazdı:)$/i;
const DIVIDER = /^-{2,}\s*(Original Message|Orijinal İleti|Özgün İleti)\s*-{2,}$/i;
const quotedLine = (l: string) => l.trimStart().startsWith('>');

/**
 * Splits a mail's text where the earlier mail it quotes starts: an "On … wrote:" line followed by
 * quoted lines, an "Original Message" divider, or a block of "> " lines that runs to the end.
 */
export function splitQuoted(body: string): { own: string; quoted: string | null } {
  const lines = body.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const after = lines.slice(i + 1);
    const starts =
      (ATTRIBUTION.test(line) && after.some(quotedLine)) || DIVIDER.test(line) || (quotedLine(line) && after.every((l) => !l.trim() || quotedLine(l)));
    if (!starts) continue;
    const own = lines.slice(0, i).join('\n').trimEnd();
    return own ? { own, quoted: lines.slice(i).join('\n') } : { own: body, quoted: null };
  }
  return { own: body, quoted: null };
}

/** A message's text; for mail, the quoted earlier mail is folded behind a button. */
export function TextBody(props: { body: string; email: boolean }) {
  const [open, setOpen] = useState(false);
  const { own, quoted } = props.email ? splitQuoted(props.body) : { own: props.body, quoted: null };
  return (
    <>
      <div class="msg-body">{own}</div>
      {quoted !== null && (
        <>
          <button class="btn btn-ghost quoted-toggle" type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {open ? t('conv.hide_quoted') : t('conv.show_quoted')}
          </button>
          {open && <div class="msg-body quoted">{quoted}</div>}
        </>
      )}
    </>
  );
}

type Attachment = Message['attachments'][number];
const previewable = (a: Attachment) => a.content_type.startsWith('image/') && !a.content_type.includes('svg');

/** A message's files: an image opens a preview (with its download), any other file downloads. */
export function Attachments(props: { files: Attachment[] }) {
  const [shown, setShown] = useState<Attachment | null>(null);
  if (props.files.length === 0) return null;
  return (
    <div class="attachments">
      {props.files.map((a) =>
        previewable(a) ? (
          <button class="attachment" type="button" key={a.id} onClick={() => setShown(a)} aria-label={t('conv.preview', { name: a.filename })}>
            <img src={a.url} alt={a.filename} loading="lazy" />
            <span>{a.filename}</span>
          </button>
        ) : (
          <a class="attachment" key={a.id} href={a.url} download={a.filename}>
            <span>{a.filename}</span>
          </a>
        ),
      )}
      {shown && (
        <Dialog title={shown.filename} onClose={() => setShown(null)}>
          <img class="preview-image" src={shown.url} alt={shown.filename} />
          <p>
            <a class="btn" href={shown.url} download={shown.filename}>
              {t('conv.download')}
            </a>
          </p>
        </Dialog>
      )}
    </div>
  );
}
