// Merge two conversations (issue 33): every message, note, event, attachment and label of the
// source moves into the target (time order is the messages' own), participants are united, the
// source's Message-IDs thread into the target from then on, and the source stays as a closed stub
// pointing to the target. The moved rows are recorded (conversation_moves) so that for 24 hours the
// merge can be undone exactly. Nothing is sent; imported rows stay quiet (no message events).
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { moveMailBack, moveMailOfConversation } from '../mail/moves.js';
import { DAY, iso } from '../platform/clock.js';
import { AppError, conflict, invalid } from '../platform/errors.js';
import { scheduleWake } from '../snooze/schedule.js';
import { type ConversationRow, formatConversation } from './format.js';
import { announceMove, type MovedRows, moveMessages, moveMessagesBack, recordMove, saveTimes, timesFromMessages, timesOf } from './moves.js';
import { MAX_RECIPIENTS, type Participant, participantsOf } from './participants.js';
import { authorFromAccess, getConversationFor, MAX_LABELS, type Tx } from './service.js';
import { labelsOf } from './store.js';

/** How long a merge can be undone. */
export const UNMERGE_WINDOW_MS = DAY;

const fieldConflict = (code: string, field: string, message: string) => conflict(`${field}: ${message}`, code, { field });

/** Why these two cannot be merged (null: they can): two e-mail conversations, or a chat into e-mail of the same contact. */
export function mergeRefusal(source: ConversationRow, target: ConversationRow): string | null {
  if (source.workspace_id !== target.workspace_id) return 'the conversations are in different workspaces';
  if (target.source !== 'email') return 'only e-mail conversations can take in another conversation';
  if (source.source === 'email') return null;
  if (source.source === 'chat')
    return source.contact_id === target.contact_id ? null : 'a chat can be merged only into an e-mail conversation of the same contact';
  return `a ${source.source} conversation cannot be merged`;
}

/** Checks a merge of source into target (both found for the caller); throws the error the API answers. */
export function checkMerge(source: ConversationRow, target: ConversationRow): void {
  if (source.id === target.id)
    throw invalid('into_id: a conversation cannot be merged into itself', { issues: [{ path: 'into_id', message: 'cannot be the conversation itself' }] });
  if (source.merged_into_id) throw fieldConflict('conversation_merged', 'conversationId', `this conversation was already merged into ${source.merged_into_id}`);
  if (target.merged_into_id)
    throw fieldConflict('conversation_merged', 'into_id', `${target.id} was merged into ${target.merged_into_id}; merge into that one instead`);
  const refusal = mergeRefusal(source, target);
  if (refusal) throw fieldConflict('not_mergeable', 'into_id', refusal);
}

function unitedParticipants(target: ConversationRow, source: ConversationRow): { list: Participant[] | null; added: string[] } {
  const current = participantsOf(target);
  const incoming = participantsOf(source) ?? [];
  if (target.source !== 'email' || incoming.length === 0) return { list: current, added: [] };
  const list = (current ?? []).map((p) => ({ ...p }));
  const added: string[] = [];
  for (const p of incoming) {
    if (list.length >= MAX_RECIPIENTS) break;
    if (list.some((o) => o.address.toLowerCase() === p.address.toLowerCase())) continue;
    // Those the source's customer had in To join the target as Cc: the target's customer stays To.
    list.push({ name: p.name, address: p.address, role: 'cc' });
    added.push(p.address.toLowerCase());
  }
  return { list, added };
}

async function mergeInTransaction(tx: Tx, access: Access, sourceId: string, targetId: string) {
  const source = await getConversationFor(tx, access, sourceId);
  const target = await getConversationFor(tx, access, targetId);
  checkMerge(source, target);
  const author = authorFromAccess(access);
  // The stub is claimed first, so two merges of one conversation at once cannot both move it.
  const claimed = await tx.db
    .updateTable('conversations')
    .set({ merged_into_id: target.id, status: 'closed', snoozed_at: null, snoozed_until: null })
    .where('id', '=', source.id)
    .where('merged_into_id', 'is', null)
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) !== 1) throw fieldConflict('conversation_merged', 'conversationId', 'this conversation was just merged');

  const messageIds = (await tx.db.selectFrom('messages').select('id').where('conversation_id', '=', source.id).orderBy('id').execute()).map((r) => r.id);
  const attachments = await moveMessages(tx, source.id, target.id, messageIds);
  const sourceLabels = (await labelsOf(tx.db, [source.id])).get(source.id)!;
  const targetLabels = (await labelsOf(tx.db, [target.id])).get(target.id)!;
  const labelsAdded = sourceLabels.filter((l) => !targetLabels.includes(l)).slice(0, Math.max(0, MAX_LABELS - targetLabels.length));
  await tx.db.deleteFrom('conversation_labels').where('conversation_id', '=', source.id).execute();
  if (labelsAdded.length)
    await tx.db
      .insertInto('conversation_labels')
      .values(labelsAdded.map((label) => ({ conversation_id: target.id, label })))
      .execute();
  const mail = await moveMailOfConversation(tx.db, { from: source.id, to: target.id });
  const participants = unitedParticipants(target, source);
  let merged: ConversationRow = target;
  if (participants.added.length) {
    const json = JSON.stringify(participants.list);
    await tx.db.updateTable('conversations').set({ participants: json }).where('id', '=', target.id).execute();
    merged = { ...merged, participants: json };
  }
  const after = await timesFromMessages(tx, merged);
  merged = await saveTimes(tx, merged, after);

  const moved: MovedRows = {
    messages: messageIds,
    attachments,
    labels: sourceLabels,
    labels_added: labelsAdded,
    mail,
    participants_added: participants.added,
    source_before: { status: source.status, snoozed_at: source.snoozed_at ?? null, snoozed_until: source.snoozed_until ?? null },
    target_before: timesOf(target),
    target_after: after,
  };
  const moveId = await recordMove(tx, { access, kind: 'merge', source, target, moved });
  const merge = {
    id: moveId,
    action: 'merged',
    source_id: source.id,
    target_id: target.id,
    undo_until: iso(new Date(tx.clock.now().getTime() + UNMERGE_WINDOW_MS)),
  };
  const stub: ConversationRow = { ...source, merged_into_id: target.id, status: 'closed', snoozed_at: null, snoozed_until: null };
  const intoTarget = await announceMove(tx, {
    conversation: merged,
    author,
    body: `Merged ${source.id}${source.subject ? ` (${source.subject})` : ''} into this conversation`,
    details: { type: 'merge', source_id: source.id, messages: messageIds.length },
    changes: { merged_from: { from: null, to: source.id } },
    data: { merge },
    reason: 'merged',
  });
  const intoStub = await announceMove(tx, {
    conversation: stub,
    author,
    body: `Merged into ${target.id}${target.subject ? ` (${target.subject})` : ''}`,
    details: { type: 'merged_into', merged_into_id: target.id },
    changes: { merged_into_id: { from: null, to: target.id } },
    data: { merge },
    reason: 'merged',
  });
  return {
    target: formatConversation(intoTarget.conversation, intoTarget.labels),
    source: formatConversation(intoStub.conversation, intoStub.labels),
    undo_until: merge.undo_until,
  };
}

/** POST /v1/conversations/{id}/merge: merges the conversation into `intoId`. */
export async function mergeConversation(ctx: Ctx, access: Access, sourceId: string, intoId: string) {
  const result = await inTransaction(ctx.db, (trx) => mergeInTransaction({ db: trx, clock: ctx.clock }, access, sourceId, intoId));
  announceEvents(ctx);
  return result;
}

/** The merge that made this conversation a stub, while it can still be undone (or why it cannot). */
async function standingMerge(tx: Tx, source: ConversationRow) {
  if (!source.merged_into_id) throw fieldConflict('not_merged', 'conversationId', 'this conversation is not merged into another');
  const record = await tx.db
    .selectFrom('conversation_moves')
    .selectAll()
    .where('source_id', '=', source.id)
    .where('kind', '=', 'merge')
    .where('undone_at', 'is', null)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!record) throw fieldConflict('not_merged', 'conversationId', 'this conversation is not merged into another');
  if (tx.clock.now().getTime() - new Date(record.created_at).getTime() > UNMERGE_WINDOW_MS)
    throw new AppError(410, 'undo_expired', `a merge can be undone for 24 hours; this one was made at ${record.created_at}`, {
      merged_at: record.created_at,
    });
  return record;
}

async function unmergeInTransaction(tx: Tx, access: Access, sourceId: string) {
  const source = await getConversationFor(tx, access, sourceId);
  const record = await standingMerge(tx, source);
  const target = await getConversationFor(tx, access, record.target_id);
  if (target.merged_into_id)
    throw conflict(`${target.id} was merged into ${target.merged_into_id} since; undo that merge first`, 'target_merged', { field: 'conversationId' });
  const moved = JSON.parse(record.moved) as MovedRows;
  const author = authorFromAccess(access);
  const done = await tx.db
    .updateTable('conversation_moves')
    .set({ undone_at: iso(tx.clock.now()) })
    .where('id', '=', record.id)
    .where('undone_at', 'is', null)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1) throw fieldConflict('not_merged', 'conversationId', 'this merge was just undone');

  await moveMessagesBack(tx, target.id, source.id, moved);
  if (moved.labels.length)
    await tx.db
      .insertInto('conversation_labels')
      .values(moved.labels.map((label) => ({ conversation_id: source.id, label })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  if (moved.labels_added.length)
    await tx.db.deleteFrom('conversation_labels').where('conversation_id', '=', target.id).where('label', 'in', moved.labels_added).execute();
  await moveMailBack(tx.db, { moved: moved.mail, from: target.id, to: source.id });

  let restored: ConversationRow = target;
  if (moved.participants_added.length) {
    const list = (participantsOf(target) ?? []).filter((p) => !moved.participants_added.includes(p.address.toLowerCase()));
    const json = JSON.stringify(list);
    await tx.db.updateTable('conversations').set({ participants: json }).where('id', '=', target.id).execute();
    restored = { ...restored, participants: json };
  }
  // Nothing came since the merge: the target's times are exactly those before it; otherwise they are read again.
  const untouched = JSON.stringify(timesOf(target)) === JSON.stringify(moved.target_after);
  restored = await saveTimes(tx, restored, untouched ? moved.target_before : await timesFromMessages(tx, restored));

  const before = moved.source_before;
  await tx.db
    .updateTable('conversations')
    .set({ merged_into_id: null, status: before.status, snoozed_at: before.snoozed_at, snoozed_until: before.snoozed_until })
    .where('id', '=', source.id)
    .execute();
  const back: ConversationRow = { ...source, merged_into_id: null, ...before };
  if (before.snoozed_at && before.snoozed_until && before.snoozed_until > iso(tx.clock.now()))
    await scheduleWake(tx.db, tx.clock, { workspaceId: source.workspace_id, conversationId: source.id }, new Date(before.snoozed_until));
  const merge = { id: record.id, action: 'unmerged', source_id: source.id, target_id: target.id };
  const fromTarget = await announceMove(tx, {
    conversation: restored,
    author,
    body: `Undid the merge of ${source.id}: its messages went back`,
    details: { type: 'unmerge', source_id: source.id, messages: moved.messages.length },
    changes: { merged_from: { from: source.id, to: null } },
    data: { merge },
    reason: 'unmerged',
  });
  const stub = await announceMove(tx, {
    conversation: back,
    author,
    body: `Undid the merge into ${target.id}`,
    details: { type: 'unmerged_from', merged_into_id: target.id },
    changes: { merged_into_id: { from: target.id, to: null } },
    data: { merge },
    reason: 'unmerged',
  });
  return { source: formatConversation(stub.conversation, stub.labels), target: formatConversation(fromTarget.conversation, fromTarget.labels) };
}

/** POST /v1/conversations/{id}/unmerge: undoes the merge of this stub (for 24 hours); exactly the moved rows go back. */
export async function unmergeConversation(ctx: Ctx, access: Access, sourceId: string) {
  const result = await inTransaction(ctx.db, (trx) => unmergeInTransaction({ db: trx, clock: ctx.clock }, access, sourceId));
  announceEvents(ctx);
  return result;
}

/** A stub's merge: when it can be undone until (null once it no longer can). */
export async function mergeUndoUntil(ctx: Pick<Ctx, 'db' | 'clock'>, source: ConversationRow): Promise<string | null> {
  if (!source.merged_into_id) return null;
  const record = await ctx.db
    .selectFrom('conversation_moves')
    .select('created_at')
    .where('source_id', '=', source.id)
    .where('kind', '=', 'merge')
    .where('undone_at', 'is', null)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!record) return null;
  const until = new Date(new Date(record.created_at).getTime() + UNMERGE_WINDOW_MS);
  return until > ctx.clock.now() ? iso(until) : null;
}
