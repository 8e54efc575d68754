// The public side of analytics: the tracker script (/a.js) and its event endpoint (POST /a/e), which
// always answers 202 at once; a dropped event is named in the svc-analytics-dropped header.
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { ingestionOf } from './runtime.js';
import { TRACKER_SCRIPT } from './tracker.js';

export const DROPPED_HEADER = 'svc-analytics-dropped';

/**
 * The client's address, as the widget's per-address limits take it (the socket's peer). When
 * SVC_TRUSTED_PROXIES lands, this must become the one shared client-address function.
 */
function requestAddress(c: Context<AppEnv>): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
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
    const reason = await ingestionOf(ctx).take({
      body: await c.req.text(),
      origin,
      userAgent: c.req.header('user-agent'),
      address: requestAddress(c),
      gpc: c.req.header('sec-gpc') === '1',
    });
    if (reason) headers[DROPPED_HEADER] = reason;
    return c.body(null, 202, headers);
  });
}
