// What merge (./merge.ts) and split (./split.ts) share: moving messages with their attachments,
// recomputing a conversation's times from the messages it holds, the stored record of a move, and
// the one event message plus conversation.updated each conversation touched gets.
import type { Access } from '../auth/access.js';
import { formatContact } from '../contacts/format.js';
import { loadContactView } from '../contacts/store.js';
import { recordEvent } from '../events/service.js';
import type { MovedMail } from '../mail/moves.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { type ConversationRow, formatConversation } from './format.js';
import { previewOf } from './preview.js';
import { type Author, insertMessage, type Tx } from './service.js';
import { chunks, labelsOf } from './store.js';

/** Exactly what a merge or split moved (and, for a merge, what an undo puts back). */
export interface MovedRows {
  messages: string[];
  attachments: string[];
  /** The source's labels (moved) and those the target did not have before (added to it). */
  labels: string[];
  labels_added: string[];
  mail: MovedMail;
  /** Addresses the target's participants gained. */
  participants_added: string[];
  source_before: Pick<ConversationRow, 'status' | 'snoozed_at' | 'snoozed_until'>;
  /** The target's times before and right after the move (an undo restores them when nothing came since). */
  target_before: ConversationTimes;
  target_after: ConversationTimes;
}

export type ConversationTimes = { last_message_at: string; preview: string | null; last_inbound_at: string | null };

export function timesOf(c: ConversationRow): ConversationTimes {
  return { last_message_at: c.last_message_at, preview: c.preview ?? null, last_inbound_at: c.last_inbound_at ?? null };
}

/** Moves these messages (and their attachments) of one conversation to another; answers the attachment ids moved. */
export async function moveMessages(tx: Tx, from: string, to: string, messageIds: readonly string[]): Promise<string[]> {
  const attachments: string[] = [];
  for (const group of chunks(messageIds)) {
    const rows = await tx.db
      .selectFrom('attachments')
      .select('id')
      .where('conversation_id', '=', from)
      .where('message_id', 'in', group)
      .orderBy('id')
      .execute();
    attachments.push(...rows.map((r) => r.id));
    await tx.db.updateTable('attachments').set({ conversation_id: to }).where('conversation_id', '=', from).where('message_id', 'in', group).execute();
    await tx.db.updateTable('messages').set({ conversation_id: to }).where('conversation_id', '=', from).where('id', 'in', group).execute();
  }
  return attachments;
}

/** Moves exactly these messages and attachments back (those still in `from`). */
export async function moveMessagesBack(tx: Tx, from: string, to: string, moved: Pick<MovedRows, 'messages' | 'attachments'>): Promise<void> {
  for (const group of chunks(moved.messages))
    await tx.db.updateTable('messages').set({ conversation_id: to }).where('conversation_id', '=', from).where('id', 'in', group).execute();
  for (const group of chunks(moved.attachments))
    await tx.db.updateTable('attachments').set({ conversation_id: to }).where('conversation_id', '=', from).where('id', 'in', group).execute();
}

/**
 * The times a conversation's list row shows, read from the messages it holds now (as insertMessage
 * keeps them): the latest message, the start of the latest one that is not automatic, the latest
 * live inbound one. A conversation without messages keeps its creation time.
 */
export async function timesFromMessages(tx: Tx, c: ConversationRow): Promise<ConversationTimes> {
  const base = tx.db.selectFrom('messages').where('conversation_id', '=', c.id).where('kind', '=', 'message');
  const latest = await base.select('created_at').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  const shown = await base.select('body').where('automatic', '=', 0).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  const inbound = await base
    .select('created_at')
    .where('direction', '=', 'in')
    .where('imported_at', 'is', null)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    last_message_at: latest?.created_at ?? c.created_at,
    preview: shown ? previewOf(shown.body) : null,
    last_inbound_at: inbound?.created_at ?? null,
  };
}

export async function saveTimes(tx: Tx, c: ConversationRow, times: ConversationTimes): Promise<ConversationRow> {
  await tx.db.updateTable('conversations').set(times).where('id', '=', c.id).execute();
  return { ...c, ...times };
}

export async function recordMove(
  tx: Tx,
  input: { access: Access; kind: 'merge' | 'split'; source: ConversationRow; target: ConversationRow; moved: MovedRows | Record<string, unknown> },
): Promise<string> {
  const now = tx.clock.now();
  const id = newId('cmv', now.getTime());
  const actor = input.access.actor;
  await tx.db
    .insertInto('conversation_moves')
    .values({
      id,
      workspace_id: input.source.workspace_id,
      kind: input.kind,
      source_id: input.source.id,
      target_id: input.target.id,
      moved: JSON.stringify(input.moved),
      person_id: actor.kind === 'member' ? actor.personId : null,
      key_id: actor.kind === 'member' ? null : actor.keyId,
      created_at: iso(now),
      undone_at: null,
    })
    .execute();
  return id;
}

/**
 * The event message that says what happened (shown in the timeline) and the one conversation.updated
 * of a conversation a merge, undo or split touched. `details.changes` never names status, so a
 * merge's close is not counted in reports nor asks for a rating.
 */
export async function announceMove(
  tx: Tx,
  input: {
    conversation: ConversationRow;
    author: Author;
    body: string;
    details: Record<string, unknown>;
    changes: Record<string, { from: unknown; to: unknown }>;
    data: Record<string, unknown>;
    reason: string;
  },
): Promise<{ conversation: ConversationRow; labels: string[] }> {
  const now = tx.clock.now();
  await tx.db
    .updateTable('conversations')
    .set({ updated_at: iso(now) })
    .where('id', '=', input.conversation.id)
    .execute();
  let conversation: ConversationRow = { ...input.conversation, updated_at: iso(now) };
  ({ conversation } = await insertMessage(tx, conversation, {
    kind: 'event',
    direction: 'out',
    author: input.author,
    body: input.body,
    details: { ...input.details, changes: input.changes },
    createdAt: now,
  }));
  const labels = (await labelsOf(tx.db, [conversation.id])).get(conversation.id)!;
  const contact = await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id);
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.updated',
    occurredAt: now,
    data: { conversation: formatConversation(conversation, labels), contact: contact ? formatContact(contact) : null, ...input.data },
    cause: { personId: input.author.type === 'member' ? input.author.personId : null, changes: input.changes, reason: input.reason },
  });
  return { conversation, labels };
}
