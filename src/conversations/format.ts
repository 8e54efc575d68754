// What the API, webhooks and realtime show of conversations, messages and attachments.
// Storage keys, raw mail headers and delivery internals never leave through anything else.
import type { AttachmentsTable, ConversationsTable, MailHeaders, MessagesTable } from '../db/schema.js';

export type ConversationRow = ConversationsTable;
export type MessageRow = MessagesTable;
export type AttachmentRow = AttachmentsTable;

export function formatConversation(c: ConversationRow, labels: readonly string[]) {
  return {
    id: c.id,
    inbox_id: c.inbox_id,
    contact_id: c.contact_id,
    channel_id: c.channel_id,
    source: c.source,
    status: c.status,
    assignee_id: c.assignee_id,
    priority: c.priority,
    labels: [...labels],
    subject: c.subject,
    spam: c.spam === 1,
    imported: c.imported === 1,
    created_at: c.created_at,
    updated_at: c.updated_at,
    last_message_at: c.last_message_at,
  };
}

export function attachmentUrl(id: string): string {
  return `/v1/attachments/${id}/content`;
}

export function formatAttachment(a: AttachmentRow) {
  return {
    id: a.id,
    filename: a.filename,
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

export function formatMessage(m: MessageRow, attachments: readonly AttachmentRow[]) {
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
    sent_at: m.sent_at,
    details,
    email: formatMailHeaders(m),
    created_at: m.created_at,
  };
}

export type FormattedConversation = ReturnType<typeof formatConversation>;
export type FormattedMessage = ReturnType<typeof formatMessage>;
