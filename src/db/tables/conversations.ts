// Table types of contacts, conversations, messages, attachments and inbound mail.
// Times are ISO 8601 text; flags are 0/1; JSON columns are text.
import type { Generated } from 'kysely';

export interface ContactsTable {
  id: string;
  workspace_id: string;
  name: string | null;
  /** JSON object of free attributes. */
  attributes: string;
  /** Set when this contact was merged into another; its emails and external ids moved there. */
  merged_into_id: string | null;
  /** An address a widget visitor typed without proof: shown to the team, never matched or mailed (added by 0031). */
  unverified_email?: string | null;
  created_at: string;
  updated_at: string;
}

/** A contact's addresses; an address belongs to at most one contact per workspace. */
export interface ContactEmailsTable {
  workspace_id: string;
  email: string;
  contact_id: string;
  position: number;
  created_at: string;
}

/** The customer backend's ids of a contact, one per inbox. */
export interface ContactExternalIdsTable {
  workspace_id: string;
  inbox_id: string;
  external_id: string;
  contact_id: string;
  created_at: string;
}

/**
 * SQLite only (migration 0071): the text the contacts list's query searches, one per contact (name,
 * attributes, addresses, external ids, one per line), kept by triggers and indexed by the FTS5
 * trigram table `contact_search_fts` over `id`. Postgres indexes the columns themselves (pg_trgm).
 */
export interface ContactSearchTable {
  id: Generated<number>;
  contact_id: string;
  body: string;
}

export type ConversationStatus = 'open' | 'pending' | 'closed';
export type ConversationPriority = 'low' | 'medium' | 'high' | 'urgent';
export type ConversationSource = 'email' | 'chat' | 'feedback' | 'api';

export interface ConversationsTable {
  id: string;
  workspace_id: string;
  inbox_id: string;
  contact_id: string;
  /** The channel replies go out through (the e-mail channel the mail came in by, a chat channel…). */
  channel_id: string | null;
  source: ConversationSource;
  status: ConversationStatus;
  assignee_id: string | null;
  priority: ConversationPriority | null;
  subject: string | null;
  spam: number;
  /** Copied from an old mailbox by a migration: no events, no mail, counted apart. */
  imported: number;
  /** When a migration copied it (retention counts from the import, not from its original times). */
  imported_at?: string | null;
  created_at: string;
  updated_at: string;
  last_message_at: string;
  /** The start of the latest message (what the panel's list shows). */
  preview?: string | null;
  /** When the customer last wrote (live mail only): unread for a member who has not opened it since. */
  last_inbound_at?: string | null;
  /** The customer's satisfaction rating (1–5) and comment, when they answered the request (0019). */
  rating_score?: number | null;
  rating_comment?: string | null;
  rated_at?: string | null;
  /** E-mail conversations: JSON `Participant[]`, who replies go to (src/conversations/participants.ts; 0036). */
  participants?: string | null;
  /** Snooze (0040): when it was put aside (null: not snoozed) and when it wakes (null: when the customer answers). */
  snoozed_at?: string | null;
  snoozed_until?: string | null;
  /** A merged conversation's stub points to the conversation it went into (0045). */
  merged_into_id?: string | null;
  /** The team it belongs to, beside its assignee (0049). */
  team_id?: string | null;
  /** SLA (0046): JSON state of the targets (src/sla/engine.ts), null when no SLA applies; the earliest open due time (a far-future sentinel when none). */
  sla?: string | null;
  sla_due_at?: string;
}

/** An address that takes part in an e-mail conversation: To or Cc of a reply-all. */
export interface Participant {
  name: string | null;
  address: string;
  role: 'to' | 'cc';
}

/** When a member last opened a conversation. */
export interface ConversationReadsTable {
  conversation_id: string;
  person_id: string;
  read_at: string;
}

export interface ConversationLabelsTable {
  conversation_id: string;
  label: string;
  /** The conversation's, kept by triggers (migration 0082) so label lists walk an index in activity order. */
  conversation_workspace_id: Generated<string | null>;
  conversation_status: Generated<ConversationStatus | null>;
  conversation_activity_at: Generated<string | null>;
}

export type MessageKind = 'message' | 'note' | 'event';
export type MessageDirection = 'in' | 'out';
export type AuthorType = 'contact' | 'member' | 'api_key' | 'system';
export type MessageDeliveryStatus = 'scheduled' | 'pending' | 'sent' | 'failed';

/** The stored and shown identity of an e-mail message (Message-IDs without angle brackets). */
export interface MailHeaders {
  message_id: string | null;
  in_reply_to: string[];
  references: string[];
  from: { name: string | null; address: string } | null;
  to: { name: string | null; address: string }[];
  cc: { name: string | null; address: string }[];
  subject: string | null;
}

export interface MessagesTable {
  id: string;
  workspace_id: string;
  conversation_id: string;
  kind: MessageKind;
  direction: MessageDirection;
  author_type: AuthorType;
  /** Members: the person (null after their account was deleted). */
  author_person_id: string | null;
  author_key_id: string | null;
  author_contact_id: string | null;
  body: string;
  /** Sanitized HTML (never the sender's raw markup). */
  html: string | null;
  subject: string | null;
  /** Auto-reply, delivery report or bulk mail: stored, never answered automatically. */
  automatic: number;
  /** JSON: what an 'event' message records ({type, from, to}), or feedback metadata. */
  details: string | null;
  /** Outbound mail: pending, sent or failed; null for messages not sent through a channel. */
  delivery_status: MessageDeliveryStatus | null;
  delivery_error: string | null;
  delivery_attempts: number;
  /** While a send keeps failing: when the next attempt is due (added by 0035). */
  delivery_retry_at?: string | null;
  sent_at: string | null;
  /** Mail headers (without angle brackets) used for threading and for the replies we send. */
  mail_message_id: string | null;
  /** JSON array: the References chain of the mail (capped). */
  mail_references: string | null;
  /** Where a reply to this inbound mail goes (Reply-To, else From). */
  mail_reply_to: string | null;
  /**
   * JSON MailHeaders: the identity of an e-mail message as received or sent (Message-ID,
   * In-Reply-To, References, From, To, Cc, Subject); null for other messages (added by 0017).
   */
  mail_headers?: string | null;
  /** JSON list of the addresses a reply went to in Bcc: shown to the team only, never in events (0036). */
  mail_bcc?: string | null;
  /** A forward: the message it quotes (0044); it answers nothing and is never the mail a reply answers. */
  forwarded_message_id?: string | null;
  /** Send later / undo send (0051): when a `scheduled` message is handed to sending. */
  send_at?: string | null;
  /** Attachments past the per-message limit, kept only in the raw .eml. */
  attachments_omitted: number;
  /** The original .eml of an inbound mail in storage (null once retention removed it). */
  raw_storage_key: string | null;
  raw_size: number | null;
  raw_sha256: string | null;
  /** When the .eml was stored (retention of originals counts from here, also for imported mail). */
  raw_stored_at?: string | null;
  created_at: string;
  /**
   * When a mailbox migration copied the message (null for everything else). created_at keeps the
   * original time; retention of imported mail counts from this one (added by 0006).
   */
  imported_at: string | null;
}

/**
 * Every Message-ID we stored or sent, per inbox: the threading index (by workspace and id) and
 * the de-duplication key (one row per inbox and id).
 */
export interface MailIdsTable {
  workspace_id: string;
  inbox_id: string;
  rfc_id: string;
  conversation_id: string;
  message_id: string;
  /** mailDigest of the inbound or imported message that registered the id; null for mail we sent (0017). */
  digest?: string | null;
  created_at: string;
}

/** Every stored inbound or imported mail by what it is (mailDigest): the same mail is stored once per inbox. */
export interface MailDigestsTable {
  workspace_id: string;
  inbox_id: string;
  digest: string;
  conversation_id: string;
  message_id: string;
  created_at: string;
}

export interface AttachmentsTable {
  id: string;
  workspace_id: string;
  conversation_id: string;
  /** Null while an upload waits to be sent with a message. */
  message_id: string | null;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  storage_key: string;
  content_id: string | null;
  inline: number;
  created_at: string;
}

/** A file uploaded for a conversation not started yet (POST /v1/conversations takes it by id; 0058). */
export interface InboxUploadsTable {
  /** An attachment id (att_…): the attachment row the new conversation makes keeps it and the storage key. */
  id: string;
  workspace_id: string;
  inbox_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  storage_key: string;
  created_at: string;
}

/** A member's unsent reply or note in a conversation (src/conversations/drafts.ts). */
export interface DraftsTable {
  conversation_id: string;
  person_id: string;
  workspace_id: string;
  kind: 'message' | 'note';
  /** Sanitized html, as the composer sends it. */
  html: string;
  /** JSON array of upload ids of the conversation. */
  attachment_ids: string;
  updated_at: string;
}

export interface ConversationTables {
  contacts: ContactsTable;
  contact_emails: ContactEmailsTable;
  contact_external_ids: ContactExternalIdsTable;
  contact_search: ContactSearchTable;
  conversations: ConversationsTable;
  conversation_labels: ConversationLabelsTable;
  conversation_reads: ConversationReadsTable;
  drafts: DraftsTable;
  inbox_uploads: InboxUploadsTable;
  messages: MessagesTable;
  mail_ids: MailIdsTable;
  mail_digests: MailDigestsTable;
  attachments: AttachmentsTable;
}
