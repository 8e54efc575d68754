// The page a sandboxed frame in the panel shows for an HTML mail: the sanitized HTML with its inline
// parts (cid:) taken from the message's own stored parts, and the headers that keep it inert.
import type { Ctx } from '../context.js';
import { openAttachment } from './attachments.js';
import { type AttachmentRow, attachmentUrl } from './format.js';

/** Raster images a frame may show from a data: URL (never SVG, which is a document of its own). */
const INLINE_IMAGE = /^image\/(png|jpe?g|gif|webp|avif|bmp)$/i;
/** An inline part above this, or parts above the total, stay links to the attachment (same origin). */
export const INLINE_PART_MAX_BYTES = 2 * 1024 * 1024;
export const INLINE_TOTAL_MAX_BYTES = 8 * 1024 * 1024;

/** A reference to one of the message's parts: `cid:` as sent, or the attachment URL ingest rewrote it to. */
const PART_REF = /(["'(\s])(cid:[^"')\s>]+|\/v1\/attachments\/[A-Za-z0-9_]+\/content)/gi;

async function dataUrl(ctx: Pick<Ctx, 'storage'>, row: AttachmentRow): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await openAttachment(ctx, row)) chunks.push(Buffer.from(chunk as Buffer));
  return `data:${row.content_type.toLowerCase()};base64,${Buffer.concat(chunks).toString('base64')}`;
}

/**
 * Replaces each reference to the message's own parts (`cid:`, or the attachment URL that ingest put
 * in its place) with the part itself: small raster images as data: URLs (the frame needs no
 * credentials to show them), anything else as the attachment's URL. Other URLs are left alone.
 */
export async function inlineParts(ctx: Pick<Ctx, 'storage'>, html: string, files: AttachmentRow[]): Promise<string> {
  const byRef = new Map<string, AttachmentRow>();
  for (const f of files) {
    byRef.set(attachmentUrl(f.id).toLowerCase(), f);
    if (f.content_id) byRef.set(`cid:${f.content_id}`.toLowerCase(), f);
  }
  const urls = new Map<string, string>();
  let total = 0;
  for (const m of html.matchAll(PART_REF)) {
    const f = byRef.get(m[2]!.toLowerCase());
    if (!f || urls.has(f.id)) continue;
    let url = attachmentUrl(f.id);
    if (INLINE_IMAGE.test(f.content_type) && f.size <= INLINE_PART_MAX_BYTES && total + f.size <= INLINE_TOTAL_MAX_BYTES) {
      try {
        url = await dataUrl(ctx, f);
        total += f.size;
      } catch {
        /* a part whose file is gone stays a link (it answers 404) */
      }
    }
    urls.set(f.id, url);
  }
  return html.replace(PART_REF, (all, before: string, ref: string) => {
    const f = byRef.get(ref.toLowerCase());
    return f ? `${before}${urls.get(f.id)}` : all;
  });
}

/**
 * The frame's headers. `allow-same-origin` lets the panel measure the mail to size its frame (and a
 * part left as a link load with the reader's cookie); nothing runs: no allow-scripts, no script-src.
 */
export function htmlPageHeaders(remoteImages: boolean): Record<string, string> {
  const csp = `default-src 'none'; img-src 'self' data:${remoteImages ? ' https: http:' : ''}; style-src 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-same-origin allow-popups allow-popups-to-escape-sandbox`;
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'SAMEORIGIN',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'private, no-store',
  };
}

export function htmlPage(body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><base target="_blank"></head><body>${body}</body></html>`;
}
