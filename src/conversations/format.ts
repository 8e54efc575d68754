// What the API, webhooks and realtime show of conversations, messages and attachments.
// Storage keys, raw mail headers and delivery internals never leave through anything else.

import { z } from '@hono/zod-openapi';
import { CustomFieldValuesSchema } from '../custom-fields/format.js';
import type { AttachmentsTable, ConversationsTable, MailHeaders, MessagesTable, Participant } from '../db/schema.js';
import { withoutBidiControls } from '../platform/foreign-text.js';
import { formatSla, SlaSchema } from '../sla/format.js';

export type ConversationRow = ConversationsTable;
export type MessageRow = MessagesTable;
export type AttachmentRow = AttachmentsTable;

/** What `snoozed_until` says while a conversation sleeps until the customer's next message. */
export const SNOOZE_UNTIL_REPLY = 'customer_reply';

export function formatConversation(c: ConversationRow, labels: readonly string[]) {
  return {
    id: c.id,
    inbox_id: c.inbox_id,
    contact_id: c.contact_id,
    channel_id: c.channel_id,
    source: c.source,
    status: c.status,
    assignee_id: c.assignee_id,
    team_id: c.team_id ?? null,
    priority: c.priority,
    labels: [...labels],
    subject: c.subject,
    spam: c.spam === 1,
    imported: c.imported === 1,
    created_at: c.created_at,
    updated_at: c.updated_at,
    last_message_at: c.last_message_at,
    rating: c.rating_score ? { score: c.rating_score, comment: c.rating_comment ?? null, rated_at: c.rated_at ?? null } : null,
    participants: c.participants ? (JSON.parse(c.participants) as Participant[]) : [],
    snoozed_at: c.snoozed_at ?? null,
    snoozed_until: c.snoozed_at ? (c.snoozed_until ?? SNOOZE_UNTIL_REPLY) : null,
    merged_into_id: c.merged_into_id ?? null,
    sla: formatSla(c.sla),
  };
}

export function attachmentUrl(id: string): string {
  return `/v1/attachments/${id}/content`;
}

/**
 * Uploads the team's html shows in place (an image pasted into the composer points at its upload's
 * URL): they go out as inline parts named by this Content-ID, and the URL becomes `cid:` in the mail.
 */
export function inlineUploads(html: string | null, ids: readonly string[]): { id: string; contentId: string }[] {
  if (!html) return [];
  return ids.filter((id) => html.includes(`src="${attachmentUrl(id)}"`)).map((id) => ({ id, contentId: `${id}@svc` }));
}

/** The html as mailed: the message's own inline parts by `cid:` instead of their panel URL. */
export function htmlForMail(html: string, files: readonly Pick<AttachmentRow, 'id' | 'inline' | 'content_id'>[]): string {
  let out = html;
  for (const f of files) if (f.inline && f.content_id) out = out.replaceAll(`src="${attachmentUrl(f.id)}"`, `src="cid:${f.content_id}"`);
  return out;
}

export function formatAttachment(a: AttachmentRow) {
  return {
    id: a.id,
    // Names stored before bidi controls were replaced at ingress are shown safely too.
    filename: withoutBidiControls(a.filename),
    content_type: a.content_type,
    size: a.size,
    sha256: a.sha256,
    inline: a.inline === 1,
    content_id: a.content_id,
    url: attachmentUrl(a.id),
    created_at: a.created_at,
  };
}

export type MessageAuthor =
  | { type: 'contact'; contact_id: string | null }
  | { type: 'member'; member_id: string | null }
  | { type: 'api_key'; api_key_id: string | null }
  | { type: 'system' };

export function formatAuthor(m: Pick<MessageRow, 'author_type' | 'author_person_id' | 'author_key_id' | 'author_contact_id'>): MessageAuthor {
  switch (m.author_type) {
    case 'contact':
      return { type: 'contact', contact_id: m.author_contact_id };
    case 'member':
      return { type: 'member', member_id: m.author_person_id };
    case 'api_key':
      return { type: 'api_key', api_key_id: m.author_key_id };
    default:
      return { type: 'system' };
  }
}

/**
 * The identity of an e-mail message (received, sent or imported); null for other messages. Mail
 * stored before 0017 shows what was kept of it then: the Message-ID, References and subject.
 */
export function formatMailHeaders(m: Pick<MessageRow, 'mail_headers' | 'mail_message_id' | 'mail_references' | 'subject' | 'kind'>): MailHeaders | null {
  if (m.mail_headers) return JSON.parse(m.mail_headers) as MailHeaders;
  if (m.kind !== 'message' || !m.mail_message_id) return null;
  return {
    message_id: m.mail_message_id,
    in_reply_to: [],
    references: m.mail_references ? (JSON.parse(m.mail_references) as string[]) : [],
    from: null,
    to: [],
    cc: [],
    subject: m.subject,
  };
}

/**
 * `bcc: true` (answers to the team's own requests) adds the Bcc a reply went to; events, webhooks and
 * realtime never carry it.
 */
export function formatMessage(m: MessageRow, attachments: readonly AttachmentRow[], opts: { bcc?: boolean } = {}) {
  const details = m.details ? (JSON.parse(m.details) as Record<string, unknown>) : null;
  return {
    id: m.id,
    conversation_id: m.conversation_id,
    kind: m.kind,
    direction: m.direction,
    author: formatAuthor(m),
    subject: m.subject,
    body: m.body,
    html: m.html,
    automatic: m.automatic === 1,
    attachments: attachments.map(formatAttachment),
    attachments_omitted: m.attachments_omitted,
    has_original: m.raw_storage_key !== null,
    /** Mail sent through a channel: pending, sent or failed (after the retries); null otherwise. */
    status: m.delivery_status,
    error: m.delivery_error,
    retry_at: m.delivery_status === 'pending' ? (m.delivery_retry_at ?? null) : null,
    sent_at: m.sent_at,
    send_at: m.delivery_status === 'scheduled' ? (m.send_at ?? null) : null,
    details,
    email: withBcc(formatMailHeaders(m), opts.bcc ? m.mail_bcc : null),
    created_at: m.created_at,
  };
}

function withBcc(headers: MailHeaders | null, bcc: string | null | undefined): (MailHeaders & { bcc?: MailHeaders['to'] }) | null {
  return headers && bcc ? { ...headers, bcc: JSON.parse(bcc) as MailHeaders['to'] } : headers;
}

// Response schemas (the OpenAPI document's Conversation, Message, …): other features' routes use them too.

export const ParticipantSchema = z
  .object({ name: z.string().nullable(), address: z.string(), role: z.enum(['to', 'cc']) })
  .openapi('Participant', { description: 'an address taking part in an e-mail conversation, To or Cc of a reply-all' });

export const ConversationSchema = z
  .object({
    id: z.string(),
    inbox_id: z.string(),
    contact_id: z.string(),
    channel_id: z.string().nullable(),
    source: z.enum(['email', 'chat', 'feedback', 'api']),
    status: z.enum(['open', 'pending', 'closed']),
    assignee_id: z.string().nullable(),
    team_id: z.string().nullable().openapi({ description: 'the team it belongs to (GET /v1/teams), beside its assignee' }),
    priority: z.enum(['low', 'medium', 'high', 'urgent']).nullable(),
    labels: z.array(z.string()),
    subject: z.string().nullable(),
    spam: z.boolean(),
    imported: z.boolean().openapi({ description: 'copied from an old mailbox by a migration' }),
    created_at: z.string(),
    updated_at: z.string(),
    last_message_at: z.string(),
    rating: z
      .object({ score: z.number().int().min(1).max(5), comment: z.string().nullable(), rated_at: z.string().nullable() })
      .nullable()
      .openapi({ description: 'the customer’s satisfaction rating, when the inbox asked for one and they answered' }),
    participants: z.array(ParticipantSchema).openapi({
      description:
        'e-mail conversations: the contact and every outside address that took part (From, To and Cc of inbound mail, what the team added); a reply without recipients goes To the customer (the Reply-To of its newest mail) and Cc the others. Never the team’s own addresses; empty for other conversations',
    }),
    snoozed_at: z.string().nullable().openapi({ description: 'when it was snoozed; null when it is not snoozed' }),
    snoozed_until: z.string().nullable().openapi({
      description:
        'when a snoozed conversation wakes (back to open, the assignee notified), or `customer_reply` when it sleeps until the customer writes; it wakes at the customer’s next message in any case. null when not snoozed',
    }),
    merged_into_id: z.string().nullable().openapi({
      description: 'set when this conversation was merged into another: it is a closed stub, everything it held (and its Message-IDs) is in that one',
    }),
    sla: SlaSchema,
    custom_fields: CustomFieldValuesSchema.optional().openapi({
      description: 'the values of the workspace’s conversation custom fields by key (null when empty); shown by GET, PATCH, the list and events',
    }),
  })
  .openapi('Conversation');

export const ConversationListItemSchema = ConversationSchema.extend({
  contact: z.object({ id: z.string(), name: z.string().nullable(), email: z.string().nullable() }),
  preview: z
    .string()
    .nullable()
    .openapi({ description: 'the start of the latest message that is not automatic mail (greetings, rating requests, auto-replies)' }),
  unread: z.boolean().openapi({ description: 'the customer wrote since the calling member last opened it (always false for API keys and imported mail)' }),
}).openapi('ConversationListItem');

export const AttachmentSchema = z
  .object({
    id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    inline: z.boolean(),
    content_id: z.string().nullable(),
    url: z.string().openapi({ description: 'download path (GET, same credentials)' }),
    created_at: z.string(),
  })
  .openapi('Attachment');

const MailAddressSchema = z.object({ name: z.string().nullable(), address: z.string() }).openapi('MailAddress');

export const ReplyRecipientsSchema = z
  .object({ to: z.array(MailAddressSchema), cc: z.array(MailAddressSchema) })
  .openapi('ReplyRecipients', { description: 'where a reply without named recipients goes' });

export const MailHeadersSchema = z
  .object({
    message_id: z.string().nullable().openapi({ description: 'Message-ID without angle brackets; an imported message keeps its original one' }),
    in_reply_to: z.array(z.string()).openapi({ description: 'Message-IDs of In-Reply-To (usually one)' }),
    references: z.array(z.string()).openapi({ description: 'Message-IDs of References, oldest first (the first and the newest 49 when longer)' }),
    from: MailAddressSchema.nullable(),
    to: z.array(MailAddressSchema),
    cc: z.array(MailAddressSchema),
    bcc: z
      .array(MailAddressSchema)
      .optional()
      .openapi({ description: 'replies sent with Bcc: shown in answers to the team only, never in events, webhooks or the mail’s headers' }),
    subject: z.string().nullable(),
  })
  .openapi('MailHeaders', {
    description:
      'the headers an e-mail message was received, sent or imported with, for correlating mail with other systems; null for messages that are not e-mail',
  });

export const MessageSchema = z
  .object({
    id: z.string(),
    conversation_id: z.string(),
    kind: z.enum(['message', 'note', 'event']),
    direction: z.enum(['in', 'out']),
    author: z.object({
      type: z.enum(['contact', 'member', 'api_key', 'system']),
      contact_id: z.string().nullable().optional(),
      member_id: z.string().nullable().optional(),
      api_key_id: z.string().nullable().optional(),
    }),
    subject: z.string().nullable(),
    body: z.string(),
    html: z.string().nullable().openapi({ description: 'sanitized HTML' }),
    automatic: z.boolean().openapi({ description: 'auto-reply, delivery report or bulk mail; never answered automatically' }),
    attachments: z.array(AttachmentSchema),
    attachments_omitted: z.number().int().openapi({ description: 'attachments past the per-message limit, kept only in the original e-mail' }),
    has_original: z.boolean().openapi({ description: 'the original .eml is kept: GET …/messages/{messageId}/raw (retention removes it after retention_days)' }),
    status: z
      .enum(['scheduled', 'pending', 'sent', 'failed'])
      .nullable()
      .openapi({ description: 'mail sent through a channel: scheduled (held until send_at), pending, sent; failed once the retries are used up' }),
    error: z.string().nullable(),
    retry_at: z.string().nullable().openapi({
      description: 'while sending keeps failing (status pending, error set): when the next attempt is due; POST …/retry tries at once',
    }),
    sent_at: z.string().nullable(),
    send_at: z
      .string()
      .nullable()
      .openapi({ description: 'status scheduled: when it is handed to sending (undo send, send later); DELETE …/schedule cancels it' }),
    details: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: 'for kind event: what changed; for a forward: `forward.message_id`, the message it forwards' }),
    email: MailHeadersSchema.nullable(),
    created_at: z.string(),
  })
  .openapi('Message');
