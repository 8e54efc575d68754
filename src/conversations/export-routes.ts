// GET /v1/conversations/export.csv: a conversation list (the same filters and order as
// GET /v1/conversations, i.e. the panel's current view) as a CSV file.
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { csvAnswer, csvDownload } from '../http/files.js';
import { bearer } from '../http/openapi.js';
import { csvFilename } from '../platform/csv.js';
import { exportConversationsCsv, MAX_EXPORT_CONVERSATIONS } from './export.js';
import { conversationListFilter, conversationListQuery } from './list-query-routes.js';

export function registerConversationExportRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/export.csv',
      tags: ['conversations'],
      summary: 'A conversation list as CSV: the same filters and order as GET /v1/conversations',
      description: `Columns: id, subject, status, priority, inbox_id, contact_id, contact_name, contact_email, assignee_id, team_id, labels (separated by "; "), source, spam, created_at, last_message_at. At most ${MAX_EXPORT_CONVERSATIONS} conversations. Cells a spreadsheet would run as a formula are escaped with an apostrophe.`,
      security: bearer,
      request: {
        query: z.object(conversationListQuery),
      },
      responses: { 200: csvDownload },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'conversations:read');
      const { filter, sort } = await conversationListFilter(ctx, access, c.req.valid('query'), c.req.queries());
      const text = await exportConversationsCsv(ctx, access, filter, sort);
      return csvAnswer(c, text, csvFilename(`conversations-${ctx.clock.now().toISOString().slice(0, 10)}`));
    },
  );
}
