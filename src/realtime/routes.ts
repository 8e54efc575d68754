// GET /v1/realtime: the event stream over a WebSocket (session cookie or API key), resumable with ?after=<seq>.
import { upgradeWebSocket } from '@hono/node-server';
import { z } from '@hono/zod-openapi';
import { accessStillValid } from '../auth/credentials.js';
import type { Ctx } from '../context.js';
import { requireViewer, viewerFor } from '../events/service.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { errorBody } from '../http/errors.js';
import { invalid } from '../platform/errors.js';
import { socketEvents } from './socket.js';
import { RealtimeStream } from './stream.js';

const afterParam = z.coerce.number().int().min(0).optional();

export function registerRealtimeRoutes(app: ApiApp, ctx: Ctx) {
  app.get(
    '/v1/realtime',
    upgradeWebSocket(async (c) => {
      const access = await requireAccess(c, ctx);
      const viewer = requireViewer(viewerFor(access));
      const parsed = afterParam.safeParse(c.req.query('after') || undefined);
      if (!parsed.success) throw invalid('after must be a sequence number (a whole number, 0 or more)');
      const subject =
        access.actor.kind === 'member' ? { kind: 'member' as const, id: access.actor.personId } : { kind: 'api_key' as const, id: access.actor.keyId };
      return socketEvents(
        ctx,
        'team',
        'realtime stream failed',
        (ws) =>
          new RealtimeStream(ctx, ws, {
            viewer,
            after: parsed.data,
            subject,
            sessionId: access.actor.kind === 'member' ? access.actor.sessionId : undefined,
            stillAllowed: () => accessStillValid(ctx, access),
          }),
      );
    }),
    (c) => c.json(errorBody('upgrade_required', 'GET /v1/realtime is a WebSocket; connect with Upgrade: websocket'), 426),
  );

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/v1/realtime',
    tags: ['events'],
    summary: 'Realtime event stream (WebSocket)',
    description:
      'Authenticate with the session cookie or Authorization: Bearer <API key>. Frames are JSON: hello {connection_id, cursor, heartbeat_seconds}; event {event: {seq, id, type, timestamp, workspace_id, inbox_id?, data}} in sequence order from ?after= on; live {cursor} once caught up; heartbeat {cursor, time}; cursor_expired {after} followed by close code 4410 when the cursor is older than what is kept; unauthorized followed by close code 4401 when the key is revoked or the session ends; access_revoked followed by close code 4403 when the workspace or account is deleted, the session is ended, or the member is removed or their role or inboxes change. With the session cookie, a browser must connect from the panel’s own origin (the Origin header is checked). Owners and admins also receive migration.* events.',
    security: [{ bearer: [] }],
    request: { query: z.object({ after: afterParam, workspace: z.string().optional() }) },
    responses: { 101: { description: 'switching to the WebSocket protocol' }, 426: { description: 'not a WebSocket request' } },
  });
}
