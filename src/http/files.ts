// Answering with a stored file: safe headers for content the server did not write.
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { withoutBidiControls } from '../platform/foreign-text.js';
import type { AppEnv } from './app.js';

/** Types a browser may show inline; everything else is offered as a download. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf']);

export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const filename = withoutBidiControls(name);
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function fileResponse(c: Context<AppEnv>, stream: Readable, opts: { contentType: string; size: number; filename: string }) {
  const inline = INLINE_TYPES.has(opts.contentType);
  return new Response(Readable.toWeb(stream) as ReadableStream, {
    status: 200,
    headers: {
      'content-type': inline ? opts.contentType : 'application/octet-stream',
      'content-length': String(opts.size),
      'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', opts.filename),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cache-control': 'private, no-store',
      'x-request-id': c.get('requestId'),
    },
  });
}

/** The OpenAPI answer of a CSV download. */
export const csvDownload = { description: 'a CSV file (attachment, RFC 4180, UTF-8, CRLF)', content: { 'text/csv': { schema: { type: 'string' as const } } } };

/** A CSV download (written by src/platform/csv.ts). */
export function csvAnswer(c: Context<AppEnv>, text: string, filename: string) {
  return c.body(text, 200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': contentDisposition('attachment', filename),
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
  });
}
