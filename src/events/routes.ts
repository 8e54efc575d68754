import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, jsonAnswer } from '../http/openapi.js';
import { AppError } from '../platform/errors.js';
import { formatStreamEvent, readEvents, requireViewer, viewerFor } from './service.js';

export const StreamEventSchema = z
  .object({
    seq: z.number().int().openapi({ description: 'increasing sequence number; resume with after=<seq>' }),
    id: z.string(),
    type: z.string(),
    timestamp: z.string().openapi({ description: 'when the change happened' }),
    workspace_id: z.string(),
    inbox_id: z.string().optional().openapi({ description: 'absent for contact events' }),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('StreamEvent');

export const cursorExpired = (after: number, prunedThrough: number) =>
  new AppError(
    410,
    'cursor_expired',
    `events after ${after} are no longer kept (or were never written here); read the current state again and follow the stream from now`,
    {
      pruned_through: prunedThrough,
    },
  );

export function registerEventRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/events',
      tags: ['events'],
      summary: 'Replay the workspace’s events after a sequence number, oldest first',
      description:
        'The same stream as GET /v1/realtime. Events are kept SVC_EVENTS_RETENTION_DAYS (7 days); an older cursor answers 410 cursor_expired. Pass last_seq as after= to continue.',
      security: bearer,
      request: {
        query: z.object({
          after: z.coerce.number().int().min(0).optional().openapi({ description: 'sequence number already seen; default: the oldest kept event' }),
          limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: '1 to 200 (default 50)' }),
        }),
      },
      responses: {
        200: jsonAnswer(
          z.object({
            data: z.array(StreamEventSchema),
            next_cursor: z.string().nullable().openapi({ description: 'set when more events follow at once: pass it as after=' }),
            last_seq: z.number().int().openapi({ description: 'the position read up to; pass it as after= next time' }),
          }),
          'events',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const viewer = requireViewer(viewerFor(access));
      const q = c.req.valid('query');
      const result = await readEvents(ctx, viewer, q.after, q.limit ?? 50);
      if (result.expired) throw cursorExpired(q.after ?? 0, result.prunedThrough);
      return c.json(
        {
          data: result.events.map((e) => formatStreamEvent(e) as z.infer<typeof StreamEventSchema>),
          next_cursor: result.more ? String(result.cursor) : null,
          last_seq: result.cursor,
        },
        200,
      );
    },
  );
}
