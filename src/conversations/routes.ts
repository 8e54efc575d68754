import { createRoute, z } from '@hono/zod-openapi';
import { ConversationVisitSchema, conversationVisit } from '../analytics/visit-store.js';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { customFieldsOf } from '../custom-fields/store.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { htmlNestsDeeperThan, MAX_HTML_CHARS, MAX_HTML_DEPTH } from '../mail/html-limits.js';
import { retryFailedReply } from '../mail/outbound.js';
import { defaultReplyRecipients } from '../mail/reply-recipients.js';
import { bulkUpdateConversations, type ConversationPatch, MAX_BULK, updateConversation } from './changes.js';
import { registerComposeRoutes } from './compose-routes.js';
import { registerDraftRoutes } from './draft-routes.js';
import { messageFor, registerMessageFileRoutes } from './file-routes.js';
import { ConversationListItemSchema, ConversationSchema, formatMessage, MessageSchema, ReplyRecipientsSchema, SNOOZE_UNTIL_REPLY } from './format.js';
import { conversationListFilter, conversationListQuery } from './list-query-routes.js';
import { listConversations, listMessages, markConversationRead } from './lists.js';
import { registerMergeRoutes } from './merge-routes.js';
import { createTeamMessage, MAX_API_BODY_CHARS } from './messages.js';
import { MAX_RECIPIENTS } from './participants.js';
import { conversationView, getConversationFor, MAX_LABEL_LENGTH, MAX_LABELS, PRIORITIES, STATUSES } from './service.js';
import { attachmentsOf, findMessage } from './store.js';

const ConversationDetailSchema = ConversationSchema.extend({
  visit: ConversationVisitSchema.nullable().openapi({
    description: 'widget conversations: the web visit it came from (a property linked to the chat channel), else null',
  }),
}).openapi('ConversationDetail');

const conversationParams = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });
const messageParams = conversationParams.extend({ messageId: idParam('messageId', 'm_01hxyz') });

const PatchSchema = z
  .object({
    status: z.enum(STATUSES as [string, ...string[]]).optional(),
    assignee_id: z.string().max(100).nullable().optional().openapi({ description: 'a member’s person id, or null to unassign' }),
    team_id: z.string().max(100).nullable().optional().openapi({ description: 'a team’s id (GET /v1/teams), or null to take it out of its team' }),
    priority: z
      .enum(PRIORITIES as [string, ...string[]])
      .nullable()
      .optional(),
    labels: z.array(z.string().max(MAX_LABEL_LENGTH)).max(MAX_LABELS).optional().openapi({ description: 'replaces the labels' }),
    subject: z.string().max(998).nullable().optional(),
    spam: z.boolean().optional(),
    contact_id: z.string().max(100).optional().openapi({ description: 'move the conversation to another contact' }),
    inbox_id: z.string().max(100).optional().openapi({ description: 'move the conversation to another inbox' }),
    custom_fields: z.record(z.string().max(100), z.unknown()).optional().openapi({
      description:
        'values of custom fields by key (GET /v1/custom-fields), checked by type (a 400 names each bad field); null clears one; keys not named stay as they are',
    }),
    snoozed_until: z
      .union([z.iso.datetime({ offset: true }), z.literal(SNOOZE_UNTIL_REPLY)])
      .nullable()
      .optional()
      .openapi({
        description:
          'snooze until this time (future, at most two years ahead), or `customer_reply` until the customer writes; null wakes it now. A snoozed conversation leaves the open list and wakes (back to open, the assignee notified) at its time or at the customer’s next message, whichever comes first',
      }),
  })
  .strict();

const ParticipantsInput = z
  .array(
    z
      .object({
        name: z.string().max(200).nullable().optional(),
        address: z.string().max(320).openapi({ description: '`addr` or `Name <addr>`' }),
        role: z.enum(['to', 'cc']),
      })
      .strict(),
  )
  .max(MAX_RECIPIENTS);

const SinglePatchSchema = PatchSchema.extend({
  participants: ParticipantsInput.optional().openapi({
    description: `e-mail conversations: replaces the participants (at most ${MAX_RECIPIENTS}; never the team’s own addresses)`,
  }),
}).strict();

const recipientList = (what: string) =>
  z
    .array(z.string().max(500))
    .max(MAX_RECIPIENTS)
    .optional()
    .openapi({ description: `${what}: each \`addr\` or \`Name <addr>\`; at most ${MAX_RECIPIENTS} in to, cc and bcc together` });

function toPatch(b: z.infer<typeof SinglePatchSchema>): ConversationPatch {
  return {
    participants: b.participants,
    status: b.status as ConversationPatch['status'],
    assigneeId: b.assignee_id,
    teamId: b.team_id,
    priority: b.priority as ConversationPatch['priority'],
    labels: b.labels,
    subject: b.subject,
    spam: b.spam,
    contactId: b.contact_id,
    inboxId: b.inbox_id,
    customFields: b.custom_fields,
    snoozedUntil:
      b.snoozed_until === undefined || b.snoozed_until === null || b.snoozed_until === SNOOZE_UNTIL_REPLY ? b.snoozed_until : new Date(b.snoozed_until),
  };
}

/** A message of a conversation the caller reaches; 404 for either. */
export function registerConversationRoutes(app: ApiApp, ctx: Ctx) {
  registerDraftRoutes(app, ctx);
  registerComposeRoutes(app, ctx);
  registerMergeRoutes(app, ctx);
  registerMessageFileRoutes(app, ctx);
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations',
      tags: ['conversations'],
      summary: 'Conversations the caller reaches, newest first',
      description:
        'Custom fields filter with `custom_field.<key>=<value>` (any number, all must match): equality; a multi-select contains the option; a checkbox is true or false; a date is YYYY-MM-DD. An unknown key or a value the field cannot hold is a 400 naming it.',
      security: bearer,
      request: {
        query: listQuery.extend(conversationListQuery),
      },
      responses: { 200: jsonAnswer(pageSchema(ConversationListItemSchema), 'a page of conversations') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const q = c.req.valid('query');
      const { filter, sort } = await conversationListFilter(ctx, access, q, c.req.queries());
      const page = await listConversations(ctx, access, filter, { limit: q.limit, cursor: q.cursor, sort });
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}',
      tags: ['conversations'],
      summary: 'One conversation',
      security: bearer,
      request: { params: conversationParams },
      responses: { 200: jsonAnswer(ConversationDetailSchema, 'the conversation') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const row = await getConversationFor(ctx, access, c.req.valid('param').conversationId);
      const [view, values, visit] = await Promise.all([
        conversationView(ctx.db, row),
        customFieldsOf(ctx.db, row.workspace_id, 'conversation', [row.id]),
        conversationVisit(ctx.db, row.id),
      ]);
      return c.json({ ...view, custom_fields: values.get(row.id)!, visit }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/read',
      tags: ['conversations'],
      summary: 'Mark a conversation read for the signed-in member (the panel does when it opens one)',
      security: bearer,
      request: { params: conversationParams },
      responses: { 200: jsonAnswer(z.object({ read_at: z.string() }), 'read now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(await markConversationRead(ctx, access, c.req.valid('param').conversationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/conversations/{conversationId}',
      tags: ['conversations'],
      summary: 'Change status, assignee, priority, labels, subject, spam flag, contact, inbox, participants or custom fields',
      description:
        'Closing is refused with 409 `custom_fields_required` (with `fields`, their keys) while a custom field required before closing is empty; fill it in the same PATCH to close at once.',
      security: bearer,
      request: { params: conversationParams, body: jsonBody(SinglePatchSchema) },
      responses: { 200: jsonAnswer(ConversationSchema, 'the conversation as it is now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const result = await updateConversation(ctx, access, c.req.valid('param').conversationId, toPatch(c.req.valid('json')));
      return c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/bulk-update',
      tags: ['conversations'],
      summary: `The same changes to up to ${MAX_BULK} conversations at once (one conversation.updated each)`,
      security: bearer,
      request: {
        body: jsonBody(z.object({ conversation_ids: z.array(z.string().max(100)).min(1).max(MAX_BULK), changes: PatchSchema }).strict()),
      },
      responses: { 200: jsonAnswer(z.object({ data: z.array(ConversationSchema) }), 'the conversations as they are now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      return c.json({ data: await bulkUpdateConversations(ctx, access, b.conversation_ids, toPatch(b.changes)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/messages',
      tags: ['conversations'],
      summary: 'Messages, notes and events of a conversation (newest first; order=asc for oldest first)',
      security: bearer,
      request: { params: conversationParams, query: listQuery.extend({ order: z.enum(['asc', 'desc']).optional() }) },
      responses: { 200: jsonAnswer(pageSchema(MessageSchema), 'a page of messages') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const conversation = await getConversationFor(ctx, access, c.req.valid('param').conversationId);
      return c.json(await listMessages(ctx, conversation, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/messages',
      tags: ['conversations'],
      summary: 'Reply (mailed through the conversation’s e-mail channel) or add a note (never mailed)',
      security: bearer,
      request: {
        params: conversationParams,
        body: jsonBody(
          z
            .object({
              kind: z.enum(['message', 'note']).optional().openapi({ description: 'default message' }),
              body: textUpTo(MAX_API_BODY_CHARS)
                .optional()
                .openapi({ description: 'plain text; required unless html is given (then the plain text is made from the html and body is ignored)' }),
              html: z
                .string()
                .max(MAX_HTML_CHARS)
                .refine((html) => !htmlNestsDeeperThan(html), `html must not nest elements deeper than ${MAX_HTML_DEPTH} levels`)
                .optional()
                .openapi({
                  description:
                    'formatted text, sanitized before it is stored; replies then go out as multipart/alternative with a plain part made from it (lists, links as `text (url)`, quotes with `>`)',
                }),
              attachment_ids: z.array(z.string().max(100)).max(100).optional().openapi({ description: 'uploads of this conversation' }),
              member_id: z.string().max(100).optional().openapi({ description: 'API keys: write on behalf of this member' }),
              to: recipientList('e-mail replies: To (default: the customer, at the Reply-To of its newest mail)'),
              cc: recipientList('e-mail replies: Cc (default: the other participants)'),
              bcc: recipientList('e-mail replies: Bcc (default none; never a participant, never in events or webhooks)'),
              send_at: z
                .string()
                .max(40)
                .optional()
                .openapi({ description: 'e-mail replies: send later / undo send, an ISO time ahead (≤ 366 days); status scheduled until then' }),
              unless_customer_replies: z.boolean().optional().openapi({
                description:
                  'with send_at: if the customer writes before then, the reply is not sent; it stays as a note (details.held = customer_replied) and its author is notified (reply_held)',
              }),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(MessageSchema, 'the new message; replies by e-mail start with status pending') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      const message = await createTeamMessage(ctx, access, c.req.valid('param').conversationId, {
        kind: b.kind ?? 'message',
        body: b.body,
        html: b.html,
        attachmentIds: b.attachment_ids,
        memberId: b.member_id,
        to: b.to,
        cc: b.cc,
        bcc: b.bcc,
        sendAt: b.send_at,
        unlessCustomerReplies: b.unless_customer_replies,
      });
      return c.json(message, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/reply-recipients',
      tags: ['conversations'],
      summary: 'Where a reply without named recipients goes (reply-all: To the customer, Cc the other participants)',
      security: bearer,
      request: { params: conversationParams },
      responses: { 200: jsonAnswer(ReplyRecipientsSchema, 'To and Cc of a reply now; empty for conversations that are not e-mail') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const conversation = await getConversationFor(ctx, access, c.req.valid('param').conversationId);
      return c.json(conversation.source === 'email' ? await defaultReplyRecipients(ctx.db, conversation) : { to: [], cc: [] }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/messages/{messageId}',
      tags: ['conversations'],
      summary: 'One message (its status shows whether a reply was sent or failed)',
      security: bearer,
      request: { params: messageParams },
      responses: { 200: jsonAnswer(MessageSchema, 'the message') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const p = c.req.valid('param');
      const { message } = await messageFor(ctx, access, p);
      const files = await attachmentsOf(ctx.db, [message.id]);
      return c.json(formatMessage(message, files.get(message.id) ?? [], { bcc: true }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/messages/{messageId}/retry',
      tags: ['conversations'],
      summary: 'Send a reply whose sending failed once more, or try a waiting one now',
      description:
        'A reply with status failed gets a fresh set of attempts; a pending reply whose last attempt failed (error and retry_at set) is tried at once. 409 message_state otherwise.',
      security: bearer,
      request: { params: messageParams },
      responses: { 200: jsonAnswer(MessageSchema, 'the message, pending again') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const p = c.req.valid('param');
      const { conversation, message } = await messageFor(ctx, access, p);
      await retryFailedReply(ctx, message);
      const again = (await findMessage(ctx.db, conversation.id, message.id))!;
      return c.json(formatMessage(again, (await attachmentsOf(ctx.db, [message.id])).get(message.id) ?? [], { bcc: true }), 200);
    },
  );
}
