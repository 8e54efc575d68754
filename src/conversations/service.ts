// Conversations and their messages. Every path that creates them (inbound mail, API replies and
// notes, feedback, the chat widget, mailbox imports) goes through startConversation/appendMessage,
// which record the events in the caller's transaction unless the work is `quiet` (imported history:
// no events and no outbound mail); a copy batch builds its rows with newConversationRow/newMessageRows
// and writes them with insertConversationRows/insertMessageRows.

import type { Insertable } from 'kysely';
import { z } from 'zod';
import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import { findChannel, firstChannelOfInbox } from '../channels/store.js';
import { formatContact } from '../contacts/format.js';
import { type ContactView, findContact, loadContactView, loadContactViews } from '../contacts/store.js';
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
} from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { findLiveInbox, inboxIsDeleted } from '../inboxes/store.js';
import { insertMailId } from '../mail/store.js';
import { isMemberOf } from '../members/store.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { forbidden, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { decodeCursor, toPage, toPageById } from '../platform/pagination.js';
import { charCount } from '../platform/text.js';
import { type AttachmentRow, type ConversationRow, formatConversation, formatMessage, type MessageRow } from './format.js';
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
  deliveryStatus?: MessageDeliveryStatus | null;
  /** `headers`: the identity the mail was received or sent with (shown as `email`). */
  mail?: { messageId?: string | null; references?: string[]; replyTo?: string | null; headers?: MailHeaders };
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
    delivery_status: input.deliveryStatus ?? null,
    delivery_error: null,
    delivery_attempts: 0,
    sent_at: null,
    mail_message_id: input.mail?.messageId ?? null,
    mail_references: input.mail?.references?.length ? JSON.stringify(input.mail.references) : null,
    mail_reply_to: input.mail?.replyTo ?? null,
    mail_headers: input.mail?.headers ? JSON.stringify(input.mail.headers) : null,
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

const PREVIEW_CHARS = 200;

/** The start of a message as one line, for lists. */
export function previewOf(body: string): string {
  return body.replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARS);
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

async function recordMessageEvents(
  tx: Tx,
  view: { conversation: ConversationRow; labels: string[]; contact: ContactView; message: MessageRow; attachments: AttachmentRow[] },
  opts: { feedback?: boolean },
) {
  const { conversation, contact, message } = view;
  if (message.kind === 'event') return;
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

/** Starts a conversation with its first message and records conversation.created and message.created. */
export async function startConversation(
  tx: Tx,
  input: { conversation: NewConversation; contact: ContactView; message: NewMessage; feedback?: boolean } & RecordOptions,
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
  if (!input.quiet) {
    await recordEvent(tx, {
      workspaceId: conversation.workspace_id,
      inboxId: conversation.inbox_id,
      contactId: conversation.contact_id,
      type: 'conversation.created',
      occurredAt: new Date(conversation.created_at),
      data: { conversation: formatConversation(created.conversation, created.labels), contact: formatContact(input.contact) },
      cause: { personId: message.author_person_id },
    });
    await recordMessageEvents(tx, view, { feedback: input.feedback });
  }
  return view;
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

export interface ConversationPatch {
  status?: ConversationStatus;
  assigneeId?: string | null;
  priority?: ConversationPriority | null;
  labels?: string[];
  subject?: string | null;
  spam?: boolean;
  contactId?: string;
  inboxId?: string;
}

type Change = { from: unknown; to: unknown };

function describe(changes: Record<string, Change>): string {
  return Object.entries(changes)
    .map(([field, c]) => `${field}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}`)
    .join('; ');
}

/**
 * Applies changes to one conversation inside the caller's transaction: validates them, writes an
 * 'event' message that records what changed, and records one conversation.updated event.
 * Returns the conversation as it is now and whether anything changed.
 */
export async function applyConversationChanges(
  tx: Tx,
  input: { conversation: ConversationRow; patch: ConversationPatch; author: Author; reason?: string } & RecordOptions,
): Promise<{ conversation: ConversationRow; labels: string[]; changed: boolean }> {
  const current = input.conversation;
  const patch = input.patch;
  const currentLabels = (await labelsOf(tx.db, [current.id])).get(current.id)!;
  const set: Partial<ConversationRow> = {};
  const changes: Record<string, Change> = {};
  const note = (field: string, from: unknown, to: unknown) => {
    changes[field] = { from, to };
  };

  if (patch.status !== undefined && patch.status !== current.status) {
    if (!STATUSES.includes(patch.status)) throw invalid('status must be open, pending or closed');
    set.status = patch.status;
    note('status', current.status, patch.status);
  }
  if (patch.assigneeId !== undefined && patch.assigneeId !== current.assignee_id) {
    if (patch.assigneeId !== null) {
      if (!(await isMemberOf(tx.db, current.workspace_id, patch.assigneeId))) throw invalid(`assignee ${patch.assigneeId} is not a member of this workspace`);
    }
    set.assignee_id = patch.assigneeId;
    note('assignee_id', current.assignee_id, patch.assigneeId);
  }
  if (patch.priority !== undefined && patch.priority !== current.priority) {
    if (patch.priority !== null && !PRIORITIES.includes(patch.priority)) throw invalid('priority must be low, medium, high, urgent or null');
    set.priority = patch.priority;
    note('priority', current.priority, patch.priority);
  }
  if (patch.subject !== undefined) {
    const subject = patch.subject === null ? null : patch.subject.trim().slice(0, MAX_SUBJECT_LENGTH) || null;
    if (subject !== current.subject) {
      set.subject = subject;
      note('subject', current.subject, subject);
    }
  }
  if (patch.spam !== undefined && (patch.spam ? 1 : 0) !== current.spam) {
    set.spam = patch.spam ? 1 : 0;
    note('spam', current.spam === 1, patch.spam);
  }
  if (patch.contactId !== undefined && patch.contactId !== current.contact_id) {
    const target = await findContact(tx.db, current.workspace_id, patch.contactId);
    if (!target) throw notFound(`contact ${patch.contactId}`);
    if (target.merged_into_id) throw invalid(`contact ${patch.contactId} was merged into ${target.merged_into_id}; use that one`);
    set.contact_id = patch.contactId;
    note('contact_id', current.contact_id, patch.contactId);
  }
  if (patch.inboxId !== undefined && patch.inboxId !== current.inbox_id) {
    const inbox = await findLiveInbox(tx.db, current.workspace_id, patch.inboxId);
    if (!inbox) throw notFound(`inbox ${patch.inboxId}`);
    set.inbox_id = patch.inboxId;
    note('inbox_id', current.inbox_id, patch.inboxId);
    // Replies go out through the new inbox's channel of the same kind (its oldest), if it has one.
    if (current.channel_id) {
      const former = await findChannel(tx.db, current.channel_id);
      const replacement = former ? await firstChannelOfInbox(tx.db, patch.inboxId, former.kind) : undefined;
      set.channel_id = replacement?.id ?? null;
    }
  }
  let labels = currentLabels;
  if (patch.labels !== undefined) {
    const next = checkLabels(patch.labels);
    if (next.join('\n') !== currentLabels.join('\n')) {
      await tx.db.deleteFrom('conversation_labels').where('conversation_id', '=', current.id).execute();
      if (next.length)
        await tx.db
          .insertInto('conversation_labels')
          .values(next.map((label) => ({ conversation_id: current.id, label })))
          .execute();
      note('labels', currentLabels, next);
      labels = next;
    }
  }

  if (Object.keys(changes).length === 0) return { conversation: current, labels, changed: false };
  const now = tx.clock.now();
  set.updated_at = iso(now);
  await tx.db.updateTable('conversations').set(set).where('id', '=', current.id).execute();
  let conversation: ConversationRow = { ...current, ...set };
  const details: Record<string, unknown> = { changes };
  if (input.reason) details.reason = input.reason;
  ({ conversation } = await insertMessage(tx, conversation, {
    kind: 'event',
    direction: 'out',
    author: input.author,
    body: describe(changes),
    details,
    createdAt: now,
  }));
  if (!input.quiet) {
    const contact = await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id);
    await recordEvent(tx, {
      workspaceId: conversation.workspace_id,
      inboxId: conversation.inbox_id,
      contactId: conversation.contact_id,
      type: 'conversation.updated',
      occurredAt: now,
      data: { conversation: formatConversation(conversation, labels), contact: contact ? formatContact(contact) : null },
      cause: { personId: input.author.type === 'member' ? input.author.personId : null, changes },
    });
  }
  return { conversation, labels, changed: true };
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

/** PATCH of one conversation by a caller. */
export async function updateConversation(ctx: Ctx, access: Access, id: string, patch: ConversationPatch) {
  if (patch.inboxId !== undefined && !canSeeInbox(access, patch.inboxId)) throw notFound(`inbox ${patch.inboxId}`);
  const result = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const conversation = await getConversationFor(tx, access, id);
    return applyConversationChanges(tx, { conversation, patch, author: authorFromAccess(access) });
  });
  if (result.changed) announceEvents(ctx);
  return formatConversation(result.conversation, result.labels);
}

export const MAX_BULK = 100;

/** The same changes to several conversations in one transaction; one conversation.updated each. */
export async function bulkUpdateConversations(ctx: Ctx, access: Access, ids: readonly string[], patch: ConversationPatch) {
  const unique = [...new Set(ids)];
  if (unique.length === 0 || unique.length > MAX_BULK) throw invalid(`name 1 to ${MAX_BULK} conversations`);
  if (patch.inboxId !== undefined && !canSeeInbox(access, patch.inboxId)) throw notFound(`inbox ${patch.inboxId}`);
  const results = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const out = [];
    for (const id of unique) {
      const conversation = await getConversationFor(tx, access, id);
      out.push(await applyConversationChanges(tx, { conversation, patch, author: authorFromAccess(access) }));
    }
    return out;
  });
  if (results.some((r) => r.changed)) announceEvents(ctx);
  return results.map((r) => formatConversation(r.conversation, r.labels));
}

export interface ConversationFilter {
  inboxId?: string;
  status?: ConversationStatus;
  /** A person id, or 'none' for unassigned. */
  assigneeId?: string;
  label?: string;
  contactId?: string;
  spam?: boolean;
  imported?: boolean;
}

const cursorShape = z.object({ id: z.string() });
const activityCursorShape = z.object({ at: z.string(), id: z.string() });

export type ConversationSort = 'created' | 'activity';

/**
 * Keyset-paginated, only inboxes the caller reaches: newest first by creation, or by last activity
 * (the panel's order). Items carry what a list shows beside the conversation: the contact's name
 * and address, the start of the latest message, and whether it is unread for the calling member.
 */
export async function listConversations(
  ctx: Pick<Ctx, 'db'>,
  access: Access,
  filter: ConversationFilter,
  page: { limit?: number; cursor?: string; sort?: ConversationSort },
) {
  const limit = page.limit ?? 50;
  const sort = page.sort ?? 'created';
  let q = ctx.db
    .selectFrom('conversations')
    .selectAll()
    .where('workspace_id', '=', access.workspaceId)
    // Those of a deleted inbox are gone for readers at once (the deletion job removes them in batches).
    .where((eb) => eb.not(inboxIsDeleted('conversations.inbox_id')));
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('inbox_id', 'in', access.inboxIds) : q.where('inbox_id', '=', '');
  if (filter.inboxId) q = q.where('inbox_id', '=', filter.inboxId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.assigneeId === 'none') q = q.where('assignee_id', 'is', null);
  else if (filter.assigneeId) q = q.where('assignee_id', '=', filter.assigneeId);
  if (filter.contactId) q = q.where('contact_id', '=', filter.contactId);
  if (filter.spam !== undefined) q = q.where('spam', '=', filter.spam ? 1 : 0);
  if (filter.imported !== undefined) q = q.where('imported', '=', filter.imported ? 1 : 0);
  if (filter.label) {
    const label = filter.label;
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('conversation_labels')
          .select('conversation_labels.label')
          .whereRef('conversation_labels.conversation_id', '=', 'conversations.id')
          .where('conversation_labels.label', '=', label),
      ),
    );
  }
  let rows: ConversationRow[];
  let cursorOf: (r: ConversationRow) => unknown;
  if (sort === 'activity') {
    const after = decodeCursor(page.cursor, activityCursorShape);
    if (after) q = q.where((eb) => eb.or([eb('last_message_at', '<', after.at), eb.and([eb('last_message_at', '=', after.at), eb('id', '<', after.id)])]));
    rows = await q
      .orderBy('last_message_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    cursorOf = (r) => ({ at: r.last_message_at, id: r.id });
  } else {
    const after = decodeCursor(page.cursor, cursorShape);
    if (after) q = q.where('id', '<', after.id);
    rows = await q
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    cursorOf = (r) => ({ id: r.id });
  }
  const items = await listItems(ctx, access, rows.slice(0, limit));
  const byId = new Map(items.map((x) => [x.id, x]));
  return toPage(rows, limit, cursorOf, (r) => byId.get(r.id)!);
}

/** Conversations as lists show them: with the contact, the latest message's start and unread state. */
export async function listItems(ctx: Pick<Ctx, 'db'>, access: Access, rows: ConversationRow[]) {
  const ids = rows.map((r) => r.id);
  const personId = access.actor.kind === 'member' ? access.actor.personId : null;
  const [labels, contacts, reads] = await Promise.all([
    labelsOf(ctx.db, ids),
    loadContactViews(
      ctx.db,
      rows.map((r) => r.contact_id),
    ),
    personId && ids.length
      ? ctx.db
          .selectFrom('conversation_reads')
          .select(['conversation_id', 'read_at'])
          .where('person_id', '=', personId)
          .where('conversation_id', 'in', ids)
          .execute()
      : Promise.resolve([]),
  ]);
  const readAt = new Map(reads.map((r) => [r.conversation_id, r.read_at]));
  return rows.map((r) => {
    const contact = contacts.get(r.contact_id);
    return {
      ...formatConversation(r, labels.get(r.id) ?? []),
      contact: { id: r.contact_id, name: contact?.contact.name ?? null, email: contact?.emails[0] ?? null },
      preview: r.preview ?? null,
      unread: personId !== null && isUnread(r, readAt.get(r.id)),
    };
  });
}

/** Open conversations unread by the calling member: per inbox, assigned to them, unassigned, all. */
export async function unreadCounts(ctx: Pick<Ctx, 'db'>, access: Access) {
  const counts = { all: 0, mine: 0, unassigned: 0, inboxes: {} as Record<string, number> };
  if (access.actor.kind !== 'member') return counts;
  const personId = access.actor.personId;
  let q = ctx.db
    .selectFrom('conversations as c')
    .leftJoin('conversation_reads as r', (j) => j.onRef('r.conversation_id', '=', 'c.id').on('r.person_id', '=', personId))
    .select(['c.inbox_id', 'c.assignee_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('c.workspace_id', '=', access.workspaceId)
    .where('c.status', '=', 'open')
    .where('c.spam', '=', 0)
    .where('c.last_inbound_at', 'is not', null)
    .where((eb) => eb.or([eb('r.read_at', 'is', null), eb('r.read_at', '<', eb.ref('c.last_inbound_at'))]))
    .where((eb) => eb.not(inboxIsDeleted('c.inbox_id')));
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('c.inbox_id', 'in', access.inboxIds) : q.where('c.inbox_id', '=', '');
  for (const row of await q.groupBy(['c.inbox_id', 'c.assignee_id']).execute()) {
    const n = Number(row.n);
    counts.all += n;
    counts.inboxes[row.inbox_id] = (counts.inboxes[row.inbox_id] ?? 0) + n;
    if (row.assignee_id === personId) counts.mine += n;
    if (row.assignee_id === null) counts.unassigned += n;
  }
  return counts;
}

/** Labels in use on open conversations the caller reaches, with how many carry each (for navigation). */
export async function openLabelCounts(ctx: Pick<Ctx, 'db'>, access: Access): Promise<{ label: string; open: number }[]> {
  let q = ctx.db
    .selectFrom('conversation_labels as l')
    .innerJoin('conversations as c', 'c.id', 'l.conversation_id')
    .select(['l.label', (eb) => eb.fn.countAll<number>().as('open')])
    .where('c.workspace_id', '=', access.workspaceId)
    .where('c.status', '=', 'open')
    .where('c.spam', '=', 0);
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('c.inbox_id', 'in', access.inboxIds) : q.where('c.inbox_id', '=', '');
  const rows = await q.groupBy('l.label').orderBy('l.label').limit(200).execute();
  return rows.map((r) => ({ label: r.label, open: Number(r.open) }));
}

/** Unread for a member until they open it after the customer's latest (live) message. */
export function isUnread(c: Pick<ConversationRow, 'last_inbound_at'>, readAt: string | undefined): boolean {
  return !!c.last_inbound_at && (!readAt || readAt < c.last_inbound_at);
}

/** Records that a member opened a conversation now (it stops being unread for them). */
export async function markConversationRead(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, conversationId: string): Promise<{ read_at: string }> {
  if (access.actor.kind !== 'member') throw forbidden('only a signed-in member has an unread state');
  const conversation = await findConversation(ctx.db, access.workspaceId, conversationId);
  if (!conversation || !canSeeInbox(access, conversation.inbox_id)) throw notFound('conversation');
  const readAt = iso(ctx.clock.now());
  await ctx.db
    .insertInto('conversation_reads')
    .values({ conversation_id: conversation.id, person_id: access.actor.personId, read_at: readAt })
    .onConflict((oc) => oc.columns(['conversation_id', 'person_id']).doUpdateSet({ read_at: readAt }))
    .execute();
  return { read_at: readAt };
}

/** Messages of a conversation, newest first unless order is 'asc'. */
export async function listMessages(ctx: Pick<Ctx, 'db'>, conversation: ConversationRow, page: { limit?: number; cursor?: string; order?: 'asc' | 'desc' }) {
  const limit = page.limit ?? 50;
  const order = page.order ?? 'desc';
  const after = decodeCursor(page.cursor, cursorShape);
  let q = ctx.db.selectFrom('messages').selectAll().where('conversation_id', '=', conversation.id);
  if (after) q = q.where('id', order === 'desc' ? '<' : '>', after.id);
  const rows = await q
    .orderBy('id', order)
    .limit(limit + 1)
    .execute();
  return toPageById(
    rows,
    limit,
    (ids) => attachmentsOf(ctx.db, ids),
    (r, files) => formatMessage(r, files.get(r.id) ?? []),
  );
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
