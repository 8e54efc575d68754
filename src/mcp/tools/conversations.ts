// Conversation tools under the conversation scopes (conversations:read to search and read,
// conversations:write to reply, note, assign, set status and labels), limited to the key's inboxes
// exactly as GET/POST/PATCH /v1/conversations… are (the same service functions).
import { z } from 'zod';
import { requireScope } from '../../auth/access.js';
import { updateConversation } from '../../conversations/changes.js';
import { listConversations, listMessages } from '../../conversations/lists.js';
import { createTeamMessage, MAX_API_BODY_CHARS } from '../../conversations/messages.js';
import { MAX_RECIPIENTS } from '../../conversations/participants.js';
import { conversationView, getConversationFor, MAX_LABEL_LENGTH, MAX_LABELS } from '../../conversations/service.js';
import { customFieldConditions, customFieldsOf } from '../../custom-fields/store.js';
import { search } from '../../search/service.js';
import { defineTool } from '../tool.js';

const conversationId = z.string().min(1).max(100).describe('the conversation id (cv_…)');
const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
const changes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const status = z.enum(['open', 'pending', 'closed']);
const recipients = (what: string) =>
  z
    .array(z.string().max(500))
    .max(MAX_RECIPIENTS)
    .optional()
    .describe(`e-mail only: ${what}; each addr or "Name <addr>", at most ${MAX_RECIPIENTS} in to, cc and bcc together`);
const memberId = z.string().max(100).optional().describe('write on behalf of this member (person id, see list_members)');

export const conversationTools = [
  defineTool({
    name: 'search_conversations',
    title: 'Search conversations',
    description:
      'Full-text search of conversations (subjects and messages, notes and imported mail included); every word must match as a prefix. Each hit has the conversation, the matching message id and a snippet; contacts too when the key has contacts:read.',
    input: { q: z.string().min(1).max(200).describe('words to find'), limit: z.number().int().min(1).max(50).optional().describe('conversations, default 20') },
    annotations: readOnly,
    async run({ q, limit }, { ctx, access }) {
      requireScope(access, 'conversations:read');
      return search(ctx, access, { q, limit: limit ?? 20, contacts: access.scopes.has('contacts:read') });
    },
  }),
  defineTool({
    name: 'list_conversations',
    title: 'List conversations',
    description: 'Conversations of the inboxes this key reaches, latest activity first, with contact and preview.',
    input: {
      inbox_id: z.string().max(100).optional(),
      status: status.optional(),
      assignee_id: z.string().max(100).optional().describe('a person id, or "none" for unassigned'),
      label: z.string().max(MAX_LABEL_LENGTH).optional(),
      limit: z.number().int().min(1).max(200).optional(),
      cursor: z.string().max(500).optional(),
      custom_fields: z
        .record(z.string().max(100), z.string().max(500))
        .optional()
        .describe('custom field key → value, all must match (a multi-select contains it; a checkbox "true"/"false"; a date YYYY-MM-DD)'),
    },
    annotations: readOnly,
    async run({ inbox_id, status, assignee_id, label, limit, cursor, custom_fields }, { ctx, access }) {
      requireScope(access, 'conversations:read');
      const conditions = Object.entries(custom_fields ?? {}).map(([key, value]) => ({ key, value }));
      const customFields = await customFieldConditions(ctx.db, access.workspaceId, 'conversation', conditions);
      return listConversations(ctx, access, { inboxId: inbox_id, status, assigneeId: assignee_id, label, customFields }, { limit, cursor, sort: 'activity' });
    },
  }),
  defineTool({
    name: 'read_conversation',
    title: 'Read a conversation',
    description: 'A conversation (status, assignee, labels, subject) and its messages, notes and events, oldest first; pass next_cursor to read on.',
    input: {
      conversation_id: conversationId,
      limit: z.number().int().min(1).max(200).optional().describe('messages, default 50'),
      cursor: z.string().max(500).optional(),
    },
    annotations: readOnly,
    async run({ conversation_id, limit, cursor }, { ctx, access }) {
      requireScope(access, 'conversations:read');
      const row = await getConversationFor(ctx, access, conversation_id);
      const messages = await listMessages(ctx, row, { limit, cursor, order: 'asc' });
      const shown = await customFieldsOf(ctx.db, access.workspaceId, 'conversation', [row.id]);
      const conversation = { ...(await conversationView(ctx.db, row)), custom_fields: shown.get(row.id)! };
      return { conversation, messages: messages.data, next_cursor: messages.next_cursor };
    },
  }),
  defineTool({
    name: 'reply',
    title: 'Reply',
    description:
      'Sends a reply to the customer through the conversation’s channel (e-mail replies carry the signatures). An e-mail reply goes to all participants (To the customer, Cc the other participants) unless to/cc name others; bcc is never shown to the customers. Refused with smtp_not_configured when the e-mail channel has no SMTP account yet.',
    input: {
      conversation_id: conversationId,
      body: z.string().min(1).max(MAX_API_BODY_CHARS).describe('plain text'),
      member_id: memberId,
      to: recipients('To (replaces reply-all’s To)'),
      cc: recipients('Cc (replaces reply-all’s Cc; [] for none)'),
      bcc: recipients('Bcc'),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    async run({ conversation_id, body, member_id, to, cc, bcc }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return createTeamMessage(ctx, access, conversation_id, { kind: 'message', body, memberId: member_id, to, cc, bcc });
    },
  }),
  defineTool({
    name: 'add_note',
    title: 'Add a note',
    description: 'Adds an internal note to a conversation (seen by the team only, never mailed).',
    input: { conversation_id: conversationId, body: z.string().min(1).max(MAX_API_BODY_CHARS), member_id: memberId },
    annotations: changes,
    async run({ conversation_id, body, member_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return createTeamMessage(ctx, access, conversation_id, { kind: 'note', body, memberId: member_id });
    },
  }),
  defineTool({
    name: 'assign_conversation',
    title: 'Assign',
    description: 'Assigns a conversation to a member (person id, see list_members), or unassigns it with null.',
    input: { conversation_id: conversationId, assignee_id: z.string().max(100).nullable() },
    annotations: changes,
    async run({ conversation_id, assignee_id }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return updateConversation(ctx, access, conversation_id, { assigneeId: assignee_id });
    },
  }),
  defineTool({
    name: 'set_conversation_status',
    title: 'Set status',
    description: 'Sets a conversation open, pending or closed.',
    input: { conversation_id: conversationId, status },
    annotations: changes,
    async run({ conversation_id, status }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return updateConversation(ctx, access, conversation_id, { status });
    },
  }),
  defineTool({
    name: 'set_conversation_labels',
    title: 'Set labels',
    description: 'Replaces the labels of a conversation.',
    input: { conversation_id: conversationId, labels: z.array(z.string().min(1).max(MAX_LABEL_LENGTH)).max(MAX_LABELS) },
    annotations: changes,
    async run({ conversation_id, labels }, { ctx, access }) {
      requireScope(access, 'conversations:write');
      return updateConversation(ctx, access, conversation_id, { labels });
    },
  }),
];
