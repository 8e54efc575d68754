// Visitor files, in the chunk loaded on open: uploads (raw body, like the team's API) and
// downloads with the session token, shown through blob: URLs (an <img> cannot send the token).
import { ApiError, type VisitorMessage, type WidgetClient } from './client';

export type VisitorAttachment = VisitorMessage['attachments'][number];

function bearer(client: WidgetClient): string {
  const token = client.session()?.token;
  if (!token) throw new ApiError(401, 'unauthorized', 'no visitor session');
  return `Bearer ${token}`;
}

async function failure(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  return new ApiError(response.status, body.error?.code ?? 'error', body.error?.message ?? response.statusText);
}

export async function uploadFile(client: WidgetClient, conversationId: string, file: File): Promise<VisitorAttachment> {
  const url = new URL(`/v1/widget/conversations/${encodeURIComponent(conversationId)}/attachments`, client.origin);
  url.searchParams.set('filename', file.name || 'file');
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: bearer(client), 'content-type': file.type || 'application/octet-stream' },
    body: file,
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as VisitorAttachment;
}

const blobs = new Map<string, Promise<string>>();

/** A blob: URL of an attachment, fetched once per page. */
export function fileBlobUrl(client: WidgetClient, attachment: VisitorAttachment): Promise<string> {
  let url = blobs.get(attachment.id);
  if (!url) {
    url = fetch(new URL(attachment.url, client.origin), { headers: { authorization: bearer(client) } }).then(async (r) => {
      if (!r.ok) throw await failure(r);
      return URL.createObjectURL(await r.blob());
    });
    url.catch(() => blobs.delete(attachment.id));
    blobs.set(attachment.id, url);
  }
  return url;
}

export const isImage = (contentType: string) => /^image\/(png|jpeg|gif|webp)$/.test(contentType);

export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
