// Conversations and their messages. Every path that creates them (inbound mail, API replies and
// notes, feedback, the chat widget, mailbox imports) goes through startConversation/appendMessage,
// which record the events in the caller's transaction unless the work is `quiet` (imported history:
// no events and no outbound mail); a copy batch builds its rows with newConversationRow/newMessageRows
// and writes them with insertConversationRows/insertMessageRows.

import type { Insertable } from 'kysely';
import { type AutoAssignment, autoAssign } from '../assignment/pick.js';
import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import { formatContact } from '../contacts/format.js';
import { type ContactView, loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { reusableInsert } from '../db/reusable-query.js';
import type {
  AuthorType,
  ConversationPriority,
  ConversationSource,
  ConversationStatus,
  Db,
  MailHeaders,
  MessageDeliveryStatus,
  MessageDirection,
  MessageKind,
  Participant,
} from '../db/schema.js';
import { recordEvent } from '../events/service.js';
import { insertMailId } from '../mail/store.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { type AttachmentRow, type ConversationRow, formatConversation, formatMessage, inlineUploads, type MessageRow } from './format.js';
import { previewOf } from './preview.js';
import { attachmentsOf, findConversation, labelsOf } from './store.js';

/** A transaction (or connection) and the clock: what the insert functions need. */
export type Tx = { db: Db; clock: Clock };

export const STATUSES: readonly ConversationStatus[] = ['open', 'pending', 'closed'];
export const PRIORITIES: readonly ConversationPriority[] = ['low', 'medium', 'high', 'urgent'];
export const MAX_LABELS = 50;
export const MAX_LABEL_LENGTH = 100;
export const MAX_SUBJECT_LENGTH = 998;
export const MAX_BODY_CHARS = 1024 * 1024;

export type Author = { type: 'contact'; contactId: string } | { type: 'member'; personId: string } | { type: 'api_key'; keyId: string } | { type: 'system' };

/** Who writes when a caller acts: the signed-in member, or the API key (optionally for a member). */
export function authorFromAccess(access: Access, onBehalfOfPersonId?: string): Author {
  if (access.actor.kind === 'member') return { type: 'member', personId: access.actor.personId };
  if (onBehalfOfPersonId) return { type: 'member', personId: onBehalfOfPersonId };
  return { type: 'api_key', keyId: access.actor.keyId };
}

function authorColumns(a: Author): {
  author_type: AuthorType;
  author_person_id: string | null;
  author_key_id: string | null;
  author_contact_id: string | null;
} {
  return {
    author_type: a.type,
    author_person_id: a.type === 'member' ? a.personId : null,
    author_key_id: a.type === 'api_key' ? a.keyId : null,
    author_contact_id: a.type === 'contact' ? a.contactId : null,
  };
}

export function checkLabels(labels: readonly string[]): string[] {
  const out = [...new Set(labels.map((l) => l.trim()))];
  if (out.length > MAX_LABELS) throw invalid(`at most ${MAX_LABELS} labels`);
  for (const l of out) {
    if (!l || charCount(l) > MAX_LABEL_LENGTH || /[\u0000-\u001f\u007f]/.test(l)) throw invalid(`labels must be 1 to ${MAX_LABEL_LENGTH} printable characters`);
  }
  return out.sort();
}

export interface NewConversation {
  workspaceId: string;
  inboxId: string;
  contactId: string;
  channelId?: string | null;
  source: ConversationSource;
  subject?: string | null;
  status?: ConversationStatus;
  /** History copied by a mailbox migration. */
  imported?: boolean;
  spam?: boolean;
  labels?: string[];
  /** E-mail conversations: who replies go to (./participants.ts). */
  participants?: Participant[] | null;
  /** Original time (imports); default now. */
  createdAt?: Date;
}

// Every new message, conversation and (single) attachment: compiled once per dialect and shape.
const insertConversationRow = reusableInsert('conversations');
const insertMessageRow = reusableInsert('messages');
const insertAttachmentRow = reusableInsert('attachments');

/** A new conversation's row and its checked labels, without writing them (startConversation writes one; insertConversationRows many). */
export function newConversationRow(tx: Pick<Tx, 'clock'>, input: NewConversation): { conversation: ConversationRow; labels: string[] } {
  const at = input.createdAt ?? tx.clock.now();
  const conversation: ConversationRow = {
    id: newId('cv', at.getTime()),
    workspace_id: input.workspaceId,
    inbox_id: input.inboxId,
    contact_id: input.contactId,
    channel_id: input.channelId ?? null,
    source: input.source,
    status: input.status ?? 'open',
    assignee_id: null,
    priority: null,
    subject: input.subject ? input.subject.slice(0, MAX_SUBJECT_LENGTH) : null,
    spam: input.spam ? 1 : 0,
    imported: input.imported ? 1 : 0,
    imported_at: input.imported ? iso(tx.clock.now()) : null,
    created_at: iso(at),
    updated_at: iso(at),
    last_message_at: iso(at),
  };
  if (input.participants) conversation.participants = JSON.stringify(input.participants);
  return { conversation, labels: input.labels ? checkLabels(input.labels) : [] };
}

/** Rows per multi-row insert of the batch writers below (well under both databases' parameter limits). */
const INSERT_CHUNK = 100;

/** Conversations built with newConversationRow (and changed since, e.g. by newMessageRows), with their labels: a few multi-row inserts. */
export async function insertConversationRows(db: Db, rows: readonly { conversation: ConversationRow; labels: readonly string[] }[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('conversations')
      .values(rows.slice(i, i + INSERT_CHUNK).map((r) => r.conversation))
      .execute();
  }
  const labels = rows.flatMap((r) => r.labels.map((label) => ({ conversation_id: r.conversation.id, label })));
  for (let i = 0; i < labels.length; i += INSERT_CHUNK) {
    await db
      .insertInto('conversation_labels')
      .values(labels.slice(i, i + INSERT_CHUNK))
      .execute();
  }
}

/** Messages and attachments built with newMessageRows (their conversations written first): a few multi-row inserts. */
export async function insertMessageRows(db: Db, messages: readonly Insertable<MessageRow>[], attachments: readonly AttachmentRow[]): Promise<void> {
  for (let i = 0; i < messages.length; i += INSERT_CHUNK) {
    await db
      .insertInto('messages')
      .values(messages.slice(i, i + INSERT_CHUNK))
      .execute();
  }
  for (let i = 0; i < attachments.length; i += INSERT_CHUNK) {
    await db
      .insertInto('attachments')
      .values(attachments.slice(i, i + INSERT_CHUNK))
      .execute();
  }
}

/** A file already written to storage, to be recorded as an attachment of a new message. */
export interface StoredAttachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  storageKey: string;
  contentId?: string | null;
  inline?: boolean;
}

export interface NewMessage {
  id?: string;
  kind: MessageKind;
  direction: MessageDirection;
  author: Author;
  body: string;
  html?: string | null;
  subject?: string | null;
  automatic?: boolean;
  details?: Record<string, unknown> | null;
  /** A forward: the message it quotes (./forward.ts). */
  forwardedMessageId?: string | null;
  deliveryStatus?: MessageDeliveryStatus | null;
  /** Send later: held as `scheduled` until then (./send-later.ts); message.created waits for it. */
  sendAt?: Date;
  /** `headers`: the identity the mail was received or sent with (shown as `email`). */
  mail?: { messageId?: string | null; references?: string[]; replyTo?: string | null; headers?: MailHeaders; bcc?: MailHeaders['to'] };
  /** New files (already in storage). */
  files?: StoredAttachment[];
  /** Uploads of this conversation waiting to be sent with a message. */
  attachmentIds?: string[];
  attachmentsOmitted?: number;
  /** The original .eml of an inbound mail, already in storage. */
  raw?: { storageKey: string; size: number; sha256: string };
  createdAt?: Date;
  /** Copied by a mailbox migration at this time (createdAt is then the original time). */
  importedAt?: Date;
}

/** Inserts a message and its attachments and moves the conversation's times forward. */
export async function insertMessage(
  tx: Tx,
  conversation: ConversationRow,
  input: NewMessage,
): Promise<{ message: MessageRow; attachments: AttachmentRow[]; conversation: ConversationRow }> {
  const { message, attachments, times } = newMessageRows(tx, conversation, input);
  await insertMessageRow(tx.db, message);
  if (attachments.length === 1) await insertAttachmentRow(tx.db, attachments[0]);
  else if (attachments.length) {
    for (let i = 0; i < attachments.length; i += 100)
      await tx.db
        .insertInto('attachments')
        .values(attachments.slice(i, i + 100))
        .execute();
  }
  if (input.attachmentIds?.length) {
    const ids = [...new Set(input.attachmentIds)];
    const r = await tx.db
      .updateTable('attachments')
      .set({ message_id: message.id })
      .where('conversation_id', '=', conversation.id)
      .where('message_id', 'is', null)
      .where('id', 'in', ids)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== ids.length) throw invalid('attachment_ids must name uploads of this conversation that were not sent yet');
    // Pictures the text shows in place are the mail's inline parts.
    for (const p of inlineUploads(message.html, ids))
      await tx.db.updateTable('attachments').set({ inline: 1, content_id: p.contentId }).where('id', '=', p.id).execute();
    attachments.push(...(await tx.db.selectFrom('attachments').selectAll().where('id', 'in', ids).orderBy('id').execute()));
  }
  let updated = conversation;
  if (Object.keys(times).length) {
    await tx.db.updateTable('conversations').set(times).where('id', '=', conversation.id).execute();
    updated = { ...conversation, ...times };
  }
  return { message, attachments, conversation: updated };
}

/**
 * The rows insertMessage writes for a message and its new files, and how the conversation's times
 * move, without writing anything (uploads named by `attachmentIds` are insertMessage's alone).
 */
export function newMessageRows(
  tx: Pick<Tx, 'clock'>,
  conversation: ConversationRow,
  input: NewMessage,
): { message: MessageRow; attachments: AttachmentRow[]; times: Partial<ConversationRow> } {
  const at = input.createdAt ?? tx.clock.now();
  const message: MessageRow = {
    id: input.id ?? newId('m', at.getTime()),
    workspace_id: conversation.workspace_id,
    conversation_id: conversation.id,
    kind: input.kind,
    direction: input.direction,
    ...authorColumns(input.author),
    body: input.body.length > MAX_BODY_CHARS ? input.body.slice(0, MAX_BODY_CHARS) : input.body,
    html: input.html ?? null,
    subject: input.subject ? input.subject.slice(0, MAX_SUBJECT_LENGTH) : null,
    automatic: input.automatic ? 1 : 0,
    details: input.details ? JSON.stringify(input.details) : null,
    delivery_status: input.sendAt ? 'scheduled' : (input.deliveryStatus ?? null),
    ...(input.sendAt ? { send_at: iso(input.sendAt) } : {}),
    delivery_error: null,
    delivery_attempts: 0,
    sent_at: null,
    mail_message_id: input.mail?.messageId ?? null,
    mail_references: input.mail?.references?.length ? JSON.stringify(input.mail.references) : null,
    mail_reply_to: input.mail?.replyTo ?? null,
    mail_headers: input.mail?.headers ? JSON.stringify(input.mail.headers) : null,
    ...(input.mail?.bcc?.length ? { mail_bcc: JSON.stringify(input.mail.bcc) } : {}),
    ...(input.forwardedMessageId ? { forwarded_message_id: input.forwardedMessageId } : {}),
    attachments_omitted: input.attachmentsOmitted ?? 0,
    raw_storage_key: input.raw?.storageKey ?? null,
    raw_size: input.raw?.size ?? null,
    raw_sha256: input.raw?.sha256 ?? null,
    raw_stored_at: input.raw ? iso(tx.clock.now()) : null,
    created_at: iso(at),
    imported_at: input.importedAt ? iso(input.importedAt) : null,
  };
  const attachments: AttachmentRow[] = (input.files ?? []).map((f) => ({
    id: f.id,
    workspace_id: conversation.workspace_id,
    conversation_id: conversation.id,
    message_id: message.id,
    filename: f.filename,
    content_type: f.contentType,
    size: f.size,
    sha256: f.sha256,
    storage_key: f.storageKey,
    content_id: f.contentId ?? null,
    inline: f.inline ? 1 : 0,
    created_at: iso(at),
  }));
  const times: Partial<ConversationRow> = {};
  if (message.created_at > conversation.updated_at) times.updated_at = message.created_at;
  if (message.kind === 'message' && message.created_at > conversation.last_message_at) times.last_message_at = message.created_at;
  // Lists show the people's latest words: automatic mail (a greeting, a rating request, an
  // auto-reply) never replaces the preview.
  if (message.kind === 'message' && !message.automatic && message.created_at >= conversation.last_message_at) times.preview = previewOf(message.body);
  if (message.kind === 'message' && message.direction === 'in' && !message.imported_at && message.created_at > (conversation.last_inbound_at ?? '')) {
    times.last_inbound_at = message.created_at;
  }
  return { message, attachments, times };
}

/**
 * Registers a mail Message-ID for threading; false when the inbox has it already. `digest`: the
 * mailDigest of a received message (none for mail we send).
 */
export async function registerMailId(
  tx: Tx,
  input: { workspaceId: string; inboxId: string; rfcId: string; conversationId: string; messageId: string; digest?: string },
): Promise<boolean> {
  return insertMailId(tx.db, {
    workspace_id: input.workspaceId,
    inbox_id: input.inboxId,
    rfc_id: input.rfcId,
    conversation_id: input.conversationId,
    message_id: input.messageId,
    digest: input.digest ?? null,
    created_at: iso(tx.clock.now()),
  });
}

export interface RecordOptions {
  /** Imported history: no events (and the callers send no mail). */
  quiet?: boolean;
}

export async function recordMessageEvents(
  tx: Tx,
  view: { conversation: ConversationRow; labels: string[]; contact: ContactView; message: MessageRow; attachments: AttachmentRow[] },
  opts: { feedback?: boolean },
) {
  const { conversation, contact, message } = view;
  // A scheduled message is announced when it is handed to sending (./send-later.ts).
  if (message.kind === 'event' || message.delivery_status === 'scheduled') return;
  const data = {
    message: formatMessage(message, view.attachments),
    conversation: formatConversation(conversation, view.labels),
    contact: formatContact(contact),
  };
  const base = {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    occurredAt: new Date(message.created_at),
    cause: { personId: message.author_person_id },
  };
  await recordEvent(tx, { ...base, type: 'message.created', data, isNote: message.kind === 'note' });
  if (opts.feedback) await recordEvent(tx, { ...base, type: 'feedback.created', data });
}

/** Starts a conversation with its first message and records conversation.created and message.created (a held first message: when it is handed to sending). */
export async function startConversation(
  tx: Tx,
  input: {
    conversation: NewConversation;
    contact: ContactView;
    message: NewMessage;
    feedback?: boolean;
    /** Widget conversations: stores the web visit it came from (src/analytics) once the row exists; conversation.created carries it. */
    visit?: (conversationId: string) => Promise<unknown>;
  } & RecordOptions,
): Promise<{ conversation: ConversationRow; labels: string[]; message: MessageRow; attachments: AttachmentRow[] }> {
  const created = newConversationRow(tx, { ...input.conversation, createdAt: input.conversation.createdAt ?? input.message.createdAt });
  let written: { message: MessageRow; attachments: AttachmentRow[]; conversation: ConversationRow };
  if (input.message.attachmentIds?.length) {
    await insertConversationRows(tx.db, [created]);
    written = await insertMessage(tx, created.conversation, input.message);
  } else {
    // The first message's times and preview go in with the conversation's insert (no update after it).
    const { message, attachments, times } = newMessageRows(tx, created.conversation, input.message);
    const conversation = { ...created.conversation, ...times };
    await insertConversationRow(tx.db, conversation);
    if (created.labels.length)
      await tx.db
        .insertInto('conversation_labels')
        .values(created.labels.map((label) => ({ conversation_id: conversation.id, label })))
        .execute();
    await insertMessageRow(tx.db, message);
    if (attachments.length === 1) await insertAttachmentRow(tx.db, attachments[0]);
    else await insertMessageRows(tx.db, [], attachments);
    written = { message, attachments, conversation };
  }
  const { message, attachments, conversation } = written;
  const view = { conversation, labels: created.labels, contact: input.contact, message, attachments };
  const visit = input.visit ? { visit: await input.visit(conversation.id) } : {};
  if (input.quiet || message.delivery_status === 'scheduled') return view;
  return announceStart(tx, view, { created: created.conversation, feedback: input.feedback, visit });
}

/** conversation.created, the first message's events and the auto-assignment of a conversation that starts now. */
export async function announceStart(
  tx: Tx,
  view: { conversation: ConversationRow; labels: string[]; contact: ContactView; message: MessageRow; attachments: AttachmentRow[] },
  opts: { created: ConversationRow; feedback?: boolean; visit?: Record<string, unknown> },
) {
  const { conversation, message } = view;
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.created',
    occurredAt: new Date(conversation.created_at),
    data: { conversation: formatConversation(opts.created, view.labels), contact: formatContact(view.contact), ...opts.visit },
    cause: { personId: message.author_person_id },
  });
  await recordMessageEvents(tx, view, { feedback: opts.feedback });
  // A held start handed over now: someone may have assigned it meanwhile.
  if (!conversation.imported && !conversation.spam && !conversation.assignee_id && !conversation.team_id) {
    const auto = await autoAssign(tx, { workspaceId: conversation.workspace_id, inboxId: conversation.inbox_id, teamId: null });
    if (auto) return { ...view, conversation: await recordAutoAssignment(tx, view, auto) };
  }
  return view;
}

/** A new conversation's auto-assignment: its timeline line and one conversation.updated, as a change by hand records them (changes.ts). */
async function recordAutoAssignment(
  tx: Tx,
  view: { conversation: ConversationRow; labels: string[]; contact: ContactView },
  auto: AutoAssignment,
): Promise<ConversationRow> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  if (auto.teamId) changes.team_id = { from: null, to: auto.teamId };
  if (auto.assigneeId) changes.assignee_id = { from: null, to: auto.assigneeId };
  const set = { team_id: auto.teamId, assignee_id: auto.assigneeId };
  await tx.db.updateTable('conversations').set(set).where('id', '=', view.conversation.id).execute();
  const reason = 'auto_assignment';
  const body = Object.entries(changes)
    .map(([field, c]) => `${field}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}`)
    .join('; ');
  const { conversation } = await insertMessage(
    tx,
    { ...view.conversation, ...set },
    { kind: 'event', direction: 'out', author: { type: 'system' }, body, details: { changes, reason } },
  );
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.updated',
    occurredAt: tx.clock.now(),
    data: { conversation: formatConversation(conversation, view.labels), contact: formatContact(view.contact) },
    cause: { personId: null, changes, reason },
  });
  return conversation;
}

/** Adds a message to a conversation and records message.created (never for 'event' messages). */
export async function appendMessage(
  tx: Tx,
  input: { conversation: ConversationRow; contact?: ContactView; message: NewMessage; labels?: string[] } & RecordOptions,
): Promise<{ conversation: ConversationRow; labels: string[]; message: MessageRow; attachments: AttachmentRow[] }> {
  const { message, attachments, conversation } = await insertMessage(tx, input.conversation, input.message);
  const labels = input.labels ?? (await labelsOf(tx.db, [conversation.id])).get(conversation.id)!;
  const view = { conversation, labels, message, attachments };
  if (!input.quiet && message.kind !== 'event') {
    const contact = input.contact ?? (await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id));
    if (contact) await recordMessageEvents(tx, { ...view, contact }, {});
  }
  return view;
}

/** A conversation the caller reaches (404 otherwise, so ids outside their inboxes stay secret). */
export async function getConversationFor(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<ConversationRow> {
  const row = await findConversation(ctx.db, access.workspaceId, id);
  if (!row || !canSeeInbox(access, row.inbox_id)) throw notFound('conversation');
  return row;
}

export async function conversationView(db: Db, row: ConversationRow) {
  return formatConversation(row, (await labelsOf(db, [row.id])).get(row.id)!);
}

/** Stores the customer's satisfaction rating on the conversation (src/ratings); undefined when it is gone. */
export async function setConversationRating(
  tx: Tx,
  workspaceId: string,
  conversationId: string,
  rating: { score: number; comment: string | null; ratedAt: string },
): Promise<ConversationRow | undefined> {
  const conversation = await findConversation(tx.db, workspaceId, conversationId);
  if (!conversation) return undefined;
  const set = { rating_score: rating.score, rating_comment: rating.comment, rated_at: rating.ratedAt };
  await tx.db.updateTable('conversations').set(set).where('id', '=', conversation.id).execute();
  return { ...conversation, ...set };
}
