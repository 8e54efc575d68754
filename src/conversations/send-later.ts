// Undo send and send later (issue 34). A reply, forward or new conversation's first mail with
// `send_at` is stored at once with delivery status `scheduled`, together with a
// `message.send_later` job due at that time. The job hands it to sending (status `pending` and the
// usual `email.send` job) and records message.created then, so webhooks and notifications speak
// of mail that really goes out. The hand-over is one conditional UPDATE (scheduled → pending): a
// job run twice, by two processes or after a kill -9, hands it over once; a cancelled message is
// gone and the job finds nothing.
import type { Access } from '../auth/access.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { scheduleEmailSend } from '../mail/outbound.js';
import { deleteMailIdOfMessage } from '../mail/store.js';
import { type Clock, DAY, iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { enqueue, type JobKind } from '../platform/jobs.js';
import { replySignatures, withoutSignatures } from '../saved-replies/signatures.js';
import { deleteConversationsWithFiles } from './files.js';
import { type AttachmentRow, type ConversationRow, formatMailHeaders, formatMessage, type MessageRow } from './format.js';
import { returnToInbox } from './inbox-uploads.js';
import { announceStart, getConversationFor, recordMessageEvents, type Tx } from './service.js';
import { attachmentsOf, findConversation, labelsOf, messageById } from './store.js';

export const SEND_LATER_JOB = 'message.send_later';
/** How far ahead a message may be scheduled. */
export const MAX_SEND_LATER_MS = 366 * DAY;

export const sendAtError = (message: string) => invalid(`send_at: ${message}`, { issues: [{ path: 'send_at', message }] });

/** `send_at` of a request: a time in the future, at most MAX_SEND_LATER_MS ahead (400 with the field otherwise). */
export function parseSendAt(value: string | undefined, now: Date): Date | undefined {
  if (value === undefined) return undefined;
  const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(value) ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime())) throw sendAtError('must be an ISO 8601 time with a time zone, e.g. 2026-12-07T09:00:00Z');
  if (at.getTime() <= now.getTime()) throw sendAtError('must be in the future');
  if (at.getTime() > now.getTime() + MAX_SEND_LATER_MS) throw sendAtError('must be at most 366 days ahead');
  return at;
}

/** Stores the hand-over job of a scheduled message, in the caller's transaction. */
export async function scheduleSendLater(tx: Parameters<typeof scheduleEmailSend>[0], messageId: string, at: Date): Promise<void> {
  await enqueue(tx.db, tx.clock, { kind: SEND_LATER_JOB, payload: { messageId }, runAt: at, uniqueKey: `${SEND_LATER_JOB}:${messageId}` });
}

/** Hands a scheduled message to sending when its time has come; says what happened (tests and logs). */
export async function sendScheduledMessage(ctx: Pick<Ctx, 'db' | 'clock' | 'log' | 'hub' | 'jobs'>, messageId: string) {
  const outcome = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const message = await messageById(trx, messageId);
    if (!message || message.delivery_status !== 'scheduled') return { done: 'not_scheduled' as const };
    if (message.send_at && message.send_at > iso(ctx.clock.now())) return { later: new Date(message.send_at) };
    if (await keptBackForCustomer(tx, message)) return { done: 'held' as const };
    const claimed = await trx
      .updateTable('messages')
      .set({ delivery_status: 'pending' })
      .where('id', '=', messageId)
      .where('delivery_status', '=', 'scheduled')
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return { done: 'not_scheduled' as const };
    await recordSentLaterEvents(tx, { ...message, delivery_status: 'pending' });
    await scheduleEmailSend(tx, messageId);
    return { done: 'handed_over' as const };
  });
  if ('done' in outcome && outcome.done === 'handed_over') {
    announceEvents(ctx);
    ctx.jobs.wake();
    ctx.log.info('scheduled message handed to sending', { message_id: messageId });
  }
  if ('done' in outcome && outcome.done === 'held') {
    announceEvents(ctx);
    ctx.log.info('scheduled message kept back: the customer wrote first', { message_id: messageId });
  }
  return outcome;
}

/**
 * "Unless the customer answers first": when the customer wrote after the reply was scheduled, the
 * reply is not sent but stays as a note (details.held), so its author sees it beside the new words
 * and is notified (reply_held). False when the reply should go.
 */
async function keptBackForCustomer(tx: { db: Db; clock: Clock }, message: MessageRow): Promise<boolean> {
  const details = message.details ? (JSON.parse(message.details) as Record<string, unknown>) : {};
  if (!details.unless_customer_replies) return false;
  const answered = await tx.db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', message.conversation_id)
    .where('kind', '=', 'message')
    .where('direction', '=', 'in')
    .where('automatic', '=', 0)
    .where('created_at', '>', message.created_at)
    .limit(1)
    .executeTakeFirst();
  if (!answered) return false;
  const note = { ...message, kind: 'note' as const, delivery_status: null, send_at: null, details: JSON.stringify({ ...details, held: 'customer_replied' }) };
  const kept = await tx.db
    .updateTable('messages')
    .set({ kind: note.kind, delivery_status: null, send_at: null, details: note.details })
    .where('id', '=', message.id)
    .where('delivery_status', '=', 'scheduled')
    .executeTakeFirst();
  if (Number(kept.numUpdatedRows) !== 1) return false;
  await deleteMailIdOfMessage(tx.db, message.id);
  await recordSentLaterEvents(tx, note);
  return true;
}

/**
 * message.created for a scheduled message that is being handed to sending now (./send-later.ts); the
 * first message of a conversation the team started (details.starts_conversation) announces the
 * conversation too, held back until now so that nothing speaks of mail that was never sent.
 */
export async function recordSentLaterEvents(tx: Tx, message: MessageRow): Promise<void> {
  const conversation = await findConversation(tx.db, message.workspace_id, message.conversation_id);
  const contact = conversation && (await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id));
  if (!conversation || !contact) return;
  const labels = (await labelsOf(tx.db, [conversation.id])).get(conversation.id)!;
  const attachments = (await attachmentsOf(tx.db, [message.id])).get(message.id) ?? [];
  const view = { conversation, labels, contact, message, attachments };
  if (message.kind === 'message' && startsConversation(message)) await announceStart(tx, view, { created: conversation });
  else await recordMessageEvents(tx, view, {});
}

/** The held first message of a conversation the team started (undo send, send later). */
export const startsConversation = (m: Pick<MessageRow, 'details'>) => !!m.details && JSON.parse(m.details).starts_conversation === true;

export function sendLaterJob(ctx: Ctx): JobKind<{ messageId: string }> {
  return {
    kind: SEND_LATER_JOB,
    async run({ messageId }) {
      const outcome = await sendScheduledMessage(ctx, messageId);
      if ('later' in outcome && outcome.later) return { retryAt: outcome.later };
    },
  };
}

/** Moves a scheduled message to another time (sooner or later); 409 message_state once it was handed to sending. */
export async function rescheduleMessage(ctx: Ctx, access: Access, conversationId: string, messageId: string, sendAt: string) {
  const moved = await inTransaction(ctx.db, async (trx) => {
    const conversation = await getConversationFor({ db: trx }, access, conversationId);
    const message = await messageById(trx, messageId);
    if (!message || message.conversation_id !== conversation.id) throw notFound('message');
    const at = parseSendAt(sendAt, ctx.clock.now()) as Date;
    const r = await trx
      .updateTable('messages')
      .set({ send_at: iso(at) })
      .where('id', '=', message.id)
      .where('delivery_status', '=', 'scheduled')
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) {
      throw conflict('only a scheduled message can be moved; this one was handed to sending', 'message_state', { status: message.delivery_status });
    }
    // Sooner: the job moves up. Later: the job, due at the old time, finds the new one and waits.
    await enqueue(trx, ctx.clock, { kind: SEND_LATER_JOB, payload: { messageId }, runAt: at, uniqueKey: `${SEND_LATER_JOB}:${messageId}`, sooner: true });
    return { ...message, send_at: iso(at) };
  });
  return formatMessage(moved, (await attachmentsOf(ctx.db, [moved.id])).get(moved.id) ?? [], { bcc: true });
}

/**
 * Cancels a scheduled message (undo send, or a scheduled one the team takes back): the message is
 * removed, its files go back to the conversation's uploads, and its text comes back for the
 * composer. 409 message_state once it was handed to sending.
 */
export async function cancelScheduledMessage(ctx: Ctx, access: Access, conversationId: string, messageId: string) {
  const result = await inTransaction(ctx.db, async (trx) => {
    const conversation = await getConversationFor({ db: trx }, access, conversationId);
    const message = await messageById(trx, messageId);
    if (!message || message.conversation_id !== conversation.id) throw notFound('message');
    const files = await trx.selectFrom('attachments').selectAll().where('message_id', '=', message.id).execute();
    const removed = await trx.deleteFrom('messages').where('id', '=', message.id).where('delivery_status', '=', 'scheduled').executeTakeFirst();
    if (Number(removed.numDeletedRows) !== 1) {
      throw conflict('only a scheduled message can be cancelled; this one was handed to sending', 'message_state', { status: message.delivery_status });
    }
    if (files.length) {
      // The files stay as uploads of the conversation, ready to go with the message written again.
      await trx
        .updateTable('attachments')
        .set({ message_id: null })
        .where(
          'id',
          'in',
          files.map((f) => f.id),
        )
        .execute();
    }
    await deleteMailIdOfMessage(trx, message.id);
    const conversationRemoved = startsConversation(message) && (await removeUnstarted({ db: trx, clock: ctx.clock }, conversation, files));
    const headers = formatMailHeaders(message);
    // The text as the member wrote it: sent again, it gets its signatures again.
    const written = withoutSignatures(message.body, message.html, await replySignatures(trx, conversation, message.author_person_id));
    return {
      id: message.id,
      body: written.body,
      html: written.html,
      to: headers?.to ?? [],
      cc: headers?.cc ?? [],
      bcc: message.mail_bcc ? (JSON.parse(message.mail_bcc) as { name: string | null; address: string }[]) : [],
      attachment_ids: files.map((f) => f.id),
      conversation_removed: conversationRemoved,
    };
  });
  if (result.conversation_removed) announceEvents(ctx);
  return result;
}

/**
 * A conversation the team started whose held first message was cancelled: never announced (no
 * conversation.created went out) and now empty, it goes entirely; its files go back to the inbox's
 * uploads. Kept when the team wrote a note in it meanwhile. Panels are told (a realtime-only
 * conversation.removed; webhooks never heard of it). True when it was removed.
 */
async function removeUnstarted(tx: Tx, conversation: ConversationRow, files: readonly AttachmentRow[]): Promise<boolean> {
  const left = await tx.db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversation.id)
    .where('kind', 'in', ['message', 'note'])
    .limit(1)
    .executeTakeFirst();
  if (left) return false;
  await returnToInbox(tx, { inboxId: conversation.inbox_id }, files);
  await deleteConversationsWithFiles(tx, [conversation.id]);
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.removed',
    occurredAt: tx.clock.now(),
    data: { conversation_id: conversation.id, reason: 'unsent' },
    webhook: false,
  });
  return true;
}
