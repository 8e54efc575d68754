// GET /v1/search: conversations (by their messages) and contacts matching a query.
import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import { ContactSchema } from '../contacts/format.js';
import type { Ctx } from '../context.js';
import { ConversationListItemSchema } from '../conversations/format.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, jsonAnswer } from '../http/openapi.js';
import { search } from './service.js';

export function registerSearchRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/search',
      tags: ['conversations'],
      summary: 'Search conversations (subjects and messages, notes and imported mail included) and contacts',
      description:
        'Every word must match (as a prefix); the best match of each conversation is shown with a snippet. Only inboxes the caller reaches; contacts only with contacts:read.',
      security: bearer,
      request: {
        query: z.object({
          q: z.string().min(1).max(200),
          limit: z.coerce.number().int().min(1).max(50).optional().openapi({ description: 'conversations, 1 to 50 (default 20)' }),
        }),
      },
      responses: {
        200: jsonAnswer(
          z.object({
            conversations: z.array(z.object({ conversation: ConversationListItemSchema, message_id: z.string(), snippet: z.string() })),
            contacts: z.array(ContactSchema),
          }),
          'matches, best first',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const q = c.req.valid('query');
      return c.json(await search(ctx, access, { q: q.q, limit: q.limit ?? 20, contacts: access.scopes.has('contacts:read') }), 200);
    },
  );
}
