// What the greeting and the out-of-office reply share: who may get an automatic answer to a
// customer's mail, the answer written as an automatic message of the conversation with its
// email.send job (one transaction), and the log behind "once per contact per kind in 24 hours".
import { channelAddresses } from '../channels/service.js';
import type { ChannelRow } from '../channels/store.js';
import { type ContactView, lockContact } from '../contacts/store.js';
import type { ConversationRow, MessageRow } from '../conversations/format.js';
import type { Tx } from '../conversations/service.js';
import type { Db } from '../db/schema.js';
import { appendMailAnswer } from '../mail/answer.js';
import { defaultReplyRecipients } from '../mail/reply-recipients.js';
import { memberAddresses } from '../members/service.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { GREETING_INTERVAL_MS, isNoReplyAddress } from './rules.js';

export type AnswerKind = 'greeting' | 'away';

/**
 * Whether `message` (a customer's mail) may get an automatic answer: not itself automatic or
 * imported, and neither its reply address nor its sender a noreply-style, list or team address.
 */
export async function mayAnswerAutomatically(db: Db, conversation: ConversationRow, message: MessageRow): Promise<boolean> {
  if (message.direction !== 'in' || message.automatic === 1 || message.imported_at) return false;
  const recipient = message.mail_reply_to?.toLowerCase();
  if (!recipient || isNoReplyAddress(recipient)) return false;
  // Also the sender, when Reply-To names someone else: a noreply sender is automatic mail.
  const sender = (JSON.parse(message.mail_headers ?? 'null') as { from?: { address?: string } | null } | null)?.from?.address?.toLowerCase();
  if (sender && isNoReplyAddress(sender)) return false;
  const team = new Set([...(await memberAddresses(db, conversation.workspace_id)), ...(await channelAddresses(db, conversation.workspace_id))]);
  return !team.has(recipient) && !(sender && team.has(sender));
}

/**
 * Whether the contact got an answer of this kind (from any inbox) within the interval. Locks the
 * contact first, so that two answers to one contact written at once (two processes) cannot both
 * find none.
 */
export async function answeredRecently(db: Db, contactId: string, kind: AnswerKind, now: Date): Promise<boolean> {
  await lockContact(db, contactId);
  const since = iso(new Date(now.getTime() - GREETING_INTERVAL_MS));
  const row = await db
    .selectFrom('greetings_sent')
    .select('message_id')
    .where('contact_id', '=', contactId)
    .where('kind', '=', kind)
    .where('sent_at', '>', since)
    .limit(1)
    .executeTakeFirst();
  return !!row;
}

/**
 * Writes the answer: a message of the conversation marked automatic, threaded like a reply and
 * addressed to the customer alone (RFC 3834: never to everyone they copied), its email.send job,
 * and the log row.
 */
export async function appendAutomaticAnswer(
  tx: Tx,
  input: {
    kind: AnswerKind;
    conversation: ConversationRow;
    contact: ContactView | undefined;
    channel: ChannelRow;
    body: string;
    details: Record<string, unknown>;
  },
): Promise<string> {
  const { conversation, channel } = input;
  const now = tx.clock.now();
  const id = newId('m', now.getTime());
  const { to } = await defaultReplyRecipients(tx.db, conversation);
  await appendMailAnswer(tx, {
    id,
    conversation,
    contact: input.contact,
    channel,
    author: { type: 'system' },
    body: input.body,
    automatic: true,
    details: input.details,
    recipients: { to, cc: [] },
    createdAt: now,
  });
  await tx.db
    .insertInto('greetings_sent')
    .values({
      message_id: id,
      kind: input.kind,
      workspace_id: conversation.workspace_id,
      inbox_id: conversation.inbox_id,
      contact_id: conversation.contact_id,
      conversation_id: conversation.id,
      sent_at: iso(now),
    })
    .execute();
  return id;
}
