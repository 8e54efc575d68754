// The public side of analytics: the tracker script (/a.js) and its event endpoint (POST /a/e), which
// always answers 202 at once; a dropped event is named in the svc-analytics-dropped header.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { Ctx } from '../context.js';
import { type ApiApp, type BodyLimitRule, DEFAULT_BODY_LIMIT } from '../http/app.js';
import { clientAddress } from '../http/client-address.js';
import { MAX_BODY_BYTES } from './ingest.js';
import { ingestionOf } from './runtime.js';
import { TRACKER_SCRIPT } from './tracker.js';

export const DROPPED_HEADER = 'svc-analytics-dropped';

/** POST /a/e reads its body off the node request (see readBody); Content-Length past 1 MiB is still a 413. */
export const ANALYTICS_BODY_RULES: BodyLimitRule[] = [{ method: 'POST', path: /^\/a\/e$/, maxBytes: () => DEFAULT_BODY_LIMIT, readsOwnBody: true }];

/**
 * The event's body, or null past MAX_BODY_BYTES (the rest is read and let go). Read straight off the
 * node request: hono's adapter would build a web Request and stream for it, which cost more than
 * all the rest of taking an event (bench/analytics).
 */
function readBody(c: Context): Promise<string | null> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return c.req.text().then((text) => (Buffer.byteLength(text) > MAX_BODY_BYTES ? null : text));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    incoming.once('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks, size).toString('utf8')));
    incoming.once('error', reject);
  });
}

export function registerAnalyticsIngestRoutes(app: ApiApp, ctx: Ctx) {
  const script = Buffer.from(TRACKER_SCRIPT);
  app.get('/a.js', (c) =>
    c.body(new Uint8Array(script), 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'cache-control': 'public, max-age=3600',
    }),
  );

  app.post('/a/e', async (c) => {
    const origin = c.req.header('origin');
    const headers: Record<string, string> = {
      'access-control-allow-origin': origin ?? '*',
      'access-control-expose-headers': DROPPED_HEADER,
      vary: 'Origin',
      'cache-control': 'no-store',
    };
    const ingestion = ingestionOf(ctx);
    const body = await readBody(c);
    const reason =
      body === null
        ? ingestion.dropped('invalid')
        : await ingestion.take({
            body,
            origin,
            userAgent: c.req.header('user-agent'),
            address: clientAddress(c, ctx.config.clientAddress),
            gpc: c.req.header('sec-gpc') === '1',
          });
    if (reason) headers[DROPPED_HEADER] = reason;
    return c.body(null, 202, headers);
  });
}
