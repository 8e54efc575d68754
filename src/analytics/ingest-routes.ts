// The public side of analytics: the tracker script (/a.js) and its event endpoint (POST /a/e), which
// always answers 202 at once; a dropped event is named in the svc-analytics-dropped header.
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { clientAddress } from '../http/client-address.js';
import { ingestionOf } from './runtime.js';
import { TRACKER_SCRIPT } from './tracker.js';

export const DROPPED_HEADER = 'svc-analytics-dropped';

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
    const reason = await ingestionOf(ctx).take({
      body: await c.req.text(),
      origin,
      userAgent: c.req.header('user-agent'),
      address: clientAddress(c, ctx.config.clientAddress),
      gpc: c.req.header('sec-gpc') === '1',
    });
    if (reason) headers[DROPPED_HEADER] = reason;
    return c.body(null, 202, headers);
  });
}
