// Merge, undo and split of conversations, and the merge suggestions (./merge.ts, ./split.ts, ./duplicates.ts).
import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { mergeTargets, possibleDuplicates } from './duplicates.js';
import { ConversationListItemSchema, ConversationSchema } from './format.js';
import { mergeConversation, mergeUndoUntil, unmergeConversation } from './merge.js';
import { getConversationFor } from './service.js';
import { splitConversation } from './split.js';

const params = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });
const base = '/v1/conversations/{conversationId}';

const MergeAnswer = z
  .object({
    target: ConversationSchema.openapi({ description: 'the conversation that took everything in' }),
    source: ConversationSchema.openapi({ description: 'the stub left behind: closed, `merged_into_id` set' }),
    undo_until: z.string().openapi({ description: 'until when POST …/unmerge on the stub undoes the merge (24 hours)' }),
  })
  .openapi('MergeResult');

const UnmergeAnswer = z.object({ source: ConversationSchema, target: ConversationSchema }).openapi('UnmergeResult');

const SplitAnswer = z
  .object({
    conversation: ConversationSchema.openapi({ description: 'the new conversation holding the moved messages' }),
    source: ConversationSchema.openapi({ description: 'the conversation they left' }),
    message_ids: z.array(z.string()).openapi({ description: 'the messages moved, oldest first' }),
  })
  .openapi('SplitResult');

const MergeState = z
  .object({
    merged_into_id: z.string().nullable(),
    undo_until: z.string().nullable().openapi({ description: 'while the merge can still be undone; null otherwise' }),
  })
  .openapi('MergeState');

const list = z.object({ data: z.array(ConversationListItemSchema) });

export function registerMergeRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/merge`,
      tags: ['conversations'],
      summary: 'Merge this conversation into another',
      description:
        'Every message, note, event, attachment and label moves into `into_id` (in time order), the participants are united and this conversation’s Message-IDs thread into the target from then on. This one stays as a closed stub with `merged_into_id`. Two e-mail conversations, or a chat into an e-mail conversation of the same contact, of the same workspace; 409 `not_mergeable` otherwise, 409 `conversation_merged` when either is a stub, 400 into itself. Nothing is sent. One conversation.updated for each (with `merge` in its data). Undo for 24 hours with POST …/unmerge.',
      security: bearer,
      request: {
        params,
        body: jsonBody(z.object({ into_id: z.string().min(1).max(100).openapi({ description: 'the conversation to merge into' }) }).strict()),
      },
      responses: { 200: jsonAnswer(MergeAnswer, 'merged') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      return c.json(await mergeConversation(ctx, access, c.req.valid('param').conversationId, c.req.valid('json').into_id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${base}/merge`,
      tags: ['conversations'],
      summary: 'Where a merged stub went, and until when its merge can be undone',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(MergeState, 'the merge state') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const row = await getConversationFor(ctx, access, c.req.valid('param').conversationId);
      return c.json({ merged_into_id: row.merged_into_id ?? null, undo_until: await mergeUndoUntil(ctx, row) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/unmerge`,
      tags: ['conversations'],
      summary: 'Undo the merge of this stub (for 24 hours)',
      description:
        'Exactly the rows the merge moved go back (messages, notes, events, attachments, labels, Message-IDs, the participants it added); nothing else changes. 409 `not_merged` when it is not a merged stub, 409 `target_merged` when the target was merged on since, 410 `undo_expired` after 24 hours.',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(UnmergeAnswer, 'the merge is undone') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      return c.json(await unmergeConversation(ctx, access, c.req.valid('param').conversationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/split`,
      tags: ['conversations'],
      summary: 'Split a message and the later ones of its thread into a new conversation',
      description:
        'The message and the later messages that answer it (or one already moved) by In-Reply-To/References move into a new conversation of the same inbox, channel and contact (the message’s sender); their Message-IDs follow them. 400 for a note or event, 409 `nothing_left` when every message would move. Nothing is sent. One conversation.updated for each (with `split` in its data).',
      security: bearer,
      request: { params, body: jsonBody(z.object({ message_id: z.string().min(1).max(100) }).strict()) },
      responses: { 201: jsonAnswer(SplitAnswer, 'split') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      return c.json(await splitConversation(ctx, access, c.req.valid('param').conversationId, c.req.valid('json').message_id), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${base}/duplicates`,
      tags: ['conversations'],
      summary: 'Possible duplicates: open conversations of the same contact from the last 24 hours with a similar subject',
      description: 'A suggestion for the team (the panel offers to merge); nothing is ever merged by itself.',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(list, 'at most 5, latest activity first') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(await possibleDuplicates(ctx, access, c.req.valid('param').conversationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${base}/merge-targets`,
      tags: ['conversations'],
      summary: 'Conversations this one can be merged into, found by subject, contact name or address (without q: the same contact’s)',
      security: bearer,
      request: { params, query: z.object({ q: textUpTo(200).optional(), limit: z.coerce.number().int().min(1).max(50).optional() }) },
      responses: { 200: jsonAnswer(list, 'latest activity first') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const q = c.req.valid('query');
      return c.json(await mergeTargets(ctx, access, c.req.valid('param').conversationId, q.q, q.limit), 200);
    },
  );
}
