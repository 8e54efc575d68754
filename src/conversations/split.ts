// Split a conversation (issue 33): the chosen message and the later ones of its thread (mail that
// names it, or a message already taken, in In-Reply-To or References) move into a new conversation
// of the same inbox, channel and contact; their Message-IDs follow them, so later mail of that
// thread lands in the new conversation. Nothing is sent; imported rows stay quiet.
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { MailHeaders } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { moveMailOfConversation } from '../mail/moves.js';
import { teamAddresses } from '../mail/reply-recipients.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { type ConversationRow, formatConversation, formatMailHeaders, type MessageRow } from './format.js';
import { announceMove, moveMessages, recordMove, saveTimes, timesFromMessages } from './moves.js';
import { type Participant, withParticipants } from './participants.js';
import { authorFromAccess, getConversationFor, insertConversationRows, newConversationRow, type Tx } from './service.js';
import { labelsOf } from './store.js';

const messageIdIssue = (message: string) => invalid(`message_id: ${message}`, { issues: [{ path: 'message_id', message }] });

/** The ids a message answers (In-Reply-To and References). */
function answered(m: MessageRow): string[] {
  const h = formatMailHeaders(m);
  const refs = m.mail_references ? (JSON.parse(m.mail_references) as string[]) : [];
  return [...(h?.in_reply_to ?? []), ...(h?.references ?? []), ...refs];
}

/** The chosen message and the later messages of its thread, in time order. */
export function threadFrom(messages: readonly MessageRow[], chosen: MessageRow): MessageRow[] {
  const ordered = [...messages].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
  const start = ordered.findIndex((m) => m.id === chosen.id);
  const taken = [chosen];
  const ids = new Set(chosen.mail_message_id ? [chosen.mail_message_id] : []);
  for (const m of ordered.slice(start + 1)) {
    if (m.kind !== 'message' || ids.size === 0) continue;
    if (answered(m).some((id) => ids.has(id))) {
      taken.push(m);
      if (m.mail_message_id) ids.add(m.mail_message_id);
    }
  }
  return taken;
}

/** Who the new conversation's replies go to: the senders and the other outside addresses of the mail moved. */
async function participantsOfMoved(tx: Tx, workspaceId: string, moved: readonly MessageRow[]): Promise<Participant[]> {
  const team = await teamAddresses(tx.db, workspaceId);
  let list: Participant[] = [];
  for (const m of moved) {
    const h: MailHeaders | null = formatMailHeaders(m);
    if (!h || m.direction !== 'in') continue;
    const additions: Participant[] = [];
    if (h.from) additions.push({ name: h.from.name, address: h.from.address.toLowerCase(), role: list.length === 0 ? 'to' : 'cc' });
    if (m.automatic !== 1) for (const a of [...h.to, ...h.cc]) additions.push({ name: a.name, address: a.address.toLowerCase(), role: 'cc' });
    list = withParticipants(
      list,
      additions.filter((a) => !team.has(a.address)),
    );
  }
  return list;
}

async function splitInTransaction(tx: Tx, access: Access, conversationId: string, messageId: string) {
  const source = await getConversationFor(tx, access, conversationId);
  if (source.merged_into_id)
    throw conflict(`this conversation was merged into ${source.merged_into_id}; split that one`, 'conversation_merged', { field: 'conversationId' });
  const messages = await tx.db.selectFrom('messages').selectAll().where('conversation_id', '=', source.id).execute();
  const chosen = messages.find((m) => m.id === messageId);
  if (!chosen) throw notFound('message');
  if (chosen.kind !== 'message') throw messageIdIssue('only a message (not a note or an event) starts a split');
  const moved = threadFrom(messages, chosen);
  const left = messages.filter((m) => m.kind === 'message' && !moved.some((x) => x.id === m.id));
  if (left.length === 0)
    throw conflict('message_id: every message of the conversation is in that thread; nothing would be left', 'nothing_left', { field: 'message_id' });

  const contactId = chosen.direction === 'in' && chosen.author_contact_id ? chosen.author_contact_id : source.contact_id;
  const participants = source.source === 'email' ? await participantsOfMoved(tx, source.workspace_id, moved) : null;
  const created = newConversationRow(tx, {
    workspaceId: source.workspace_id,
    inboxId: source.inbox_id,
    contactId,
    channelId: source.channel_id,
    source: source.source,
    subject: chosen.subject ?? source.subject,
    status: 'open',
    imported: source.imported === 1,
    participants,
    createdAt: new Date(chosen.created_at),
  });
  const fresh: ConversationRow = { ...created.conversation, assignee_id: source.assignee_id, priority: source.priority, spam: source.spam };
  // The new conversation keeps (a copy of) the source's labels: what the team filed the thread under
  // still holds for the part split off, and neither side loses a label (both keep them).
  const labels = (await labelsOf(tx.db, [source.id])).get(source.id) ?? [];
  await insertConversationRows(tx.db, [{ conversation: fresh, labels }]);
  const ids = moved.map((m) => m.id);
  const attachments = await moveMessages(tx, source.id, fresh.id, ids);
  const mail = await moveMailOfConversation(tx.db, { from: source.id, to: fresh.id, messageIds: ids });
  const target = await saveTimes(tx, fresh, await timesFromMessages(tx, fresh));
  const rest = await saveTimes(tx, source, await timesFromMessages(tx, source));
  await recordMove(tx, { access, kind: 'split', source, target, moved: { messages: ids, attachments, mail } });

  const author = authorFromAccess(access);
  const split = { source_id: source.id, new_id: target.id, message_ids: ids, labels_copied: labels };
  const into = await announceMove(tx, {
    conversation: target,
    author,
    body: `Split from ${source.id}: ${ids.length} message${ids.length === 1 ? '' : 's'}`,
    details: { type: 'split_from', source_id: source.id, messages: ids.length },
    changes: { split_from: { from: null, to: source.id } },
    data: { split },
    reason: 'split',
  });
  const from = await announceMove(tx, {
    conversation: rest,
    author,
    body: `Split ${ids.length} message${ids.length === 1 ? '' : 's'} into ${target.id}`,
    details: { type: 'split_into', conversation_id: target.id, messages: ids.length },
    changes: { split_into: { from: null, to: target.id } },
    data: { split },
    reason: 'split',
  });
  return {
    conversation: formatConversation(into.conversation, into.labels),
    source: formatConversation(from.conversation, from.labels),
    message_ids: ids,
  };
}

/** POST /v1/conversations/{id}/split: moves the message and the later ones of its thread into a new conversation. */
export async function splitConversation(ctx: Ctx, access: Access, conversationId: string, messageId: string) {
  const result = await inTransaction(ctx.db, (trx) => splitInTransaction({ db: trx, clock: ctx.clock }, access, conversationId, messageId));
  announceEvents(ctx);
  return result;
}
