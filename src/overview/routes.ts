// GET /v1/overview: what the panel's navigation shows beside the views: unread counts, labels in use,
// and the inboxes a mailbox migration is copying into (every member sees that banner; the migration routes stay
// owner/admin only).
import { createRoute, z } from '@hono/zod-openapi';
import { canSeeInbox, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { openLabelCounts, unreadCounts } from '../conversations/lists.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, jsonAnswer } from '../http/openapi.js';
import { copiesInProgress, loadProgress } from '../mailbox-migration/store.js';

export function registerOverviewRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/overview',
      tags: ['conversations'],
      summary: 'Unread counts for the signed-in member and the inboxes history is being copied into',
      security: bearer,
      responses: {
        200: jsonAnswer(
          z.object({
            unread: z
              .object({ all: z.number().int(), mine: z.number().int(), unassigned: z.number().int(), inboxes: z.record(z.string(), z.number().int()) })
              .openapi({ description: 'open conversations the customer wrote in since the member last opened them (zero for API keys)' }),
            importing: z.array(z.object({ inbox_id: z.string(), state: z.string(), percent: z.number() })),
            labels: z
              .array(z.object({ label: z.string(), open: z.number().int() }))
              .openapi({ description: 'labels on open conversations the caller reaches, by name (at most 200)' }),
          }),
          'the overview',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const copies = (await copiesInProgress(ctx.db, access.workspaceId)).filter((m) => m.inbox_id && canSeeInbox(access, m.inbox_id));
      const importing = await Promise.all(
        copies.map(async (m) => ({ inbox_id: m.inbox_id!, state: m.state, percent: (await loadProgress(ctx.db, m.id)).percent })),
      );
      return c.json({ unread: await unreadCounts(ctx, access), importing, labels: await openLabelCounts(ctx, access) }, 200);
    },
  );
}
