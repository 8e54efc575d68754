// The actions that write messages or reach outside: a note, a notification to members, a saved
// reply (an email.send job for e-mail; a chat reply is shown to the visitor by the event), and an
// event delivered to one webhook endpoint (an outbox row). All in the caller's transaction.
import { findChannel } from '../channels/store.js';
import { formatContact } from '../contacts/format.js';
import { loadContactView } from '../contacts/store.js';
import { type ConversationRow, formatConversation } from '../conversations/format.js';
import { type Author, appendMessage } from '../conversations/service.js';
import { labelsOf } from '../conversations/store.js';
import type { Db } from '../db/schema.js';
import { recordEvent } from '../events/service.js';
import { appendMailAnswer } from '../mail/answer.js';
import { defaultReplyRecipients } from '../mail/reply-recipients.js';
import { hasSmtpAccount } from '../mail/transport.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { renderHtmlPlaceholders } from '../saved-replies/formatted.js';
import { renderPlaceholders } from '../saved-replies/placeholders.js';
import { placeholderValues } from '../saved-replies/render.js';
import { findSavedReply } from '../saved-replies/service.js';
import { enqueueDeliveryTo } from '../webhooks/outbox.js';

type Tx = { db: Db; clock: Clock };
export interface ReplyOrigin {
  rule?: { id: string; name: string };
  author: Author;
  personId: string | null;
}

export async function replyAlreadySent(db: Db, ruleId: string, conversationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('automation_replies_sent')
    .select('rule_id')
    .where('rule_id', '=', ruleId)
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return !!row;
}

/** Why a saved reply cannot go out in this conversation, or null. */
export async function replyProblem(db: Db, conversation: ConversationRow, savedReplyId: string): Promise<string | null> {
  if (!(await findSavedReply(db, conversation.workspace_id, savedReplyId))) return 'saved_reply_missing';
  if (conversation.source === 'email') {
    const channel = conversation.channel_id ? await findChannel(db, conversation.channel_id) : undefined;
    if (channel?.kind !== 'email' || !hasSmtpAccount(channel)) return 'no_outgoing_mail';
  } else if (conversation.source !== 'chat') return 'no_reply_channel';
  return null;
}

export async function addAutomationNote(tx: Tx, conversation: ConversationRow, text: string, origin: ReplyOrigin): Promise<ConversationRow> {
  const r = await appendMessage(tx, {
    conversation,
    message: {
      kind: 'note',
      direction: 'out',
      author: origin.author,
      body: text,
      details: origin.rule ? { automation_rule: { id: origin.rule.id, name: origin.rule.name } } : null,
    },
  });
  return r.conversation;
}

/** A notification for each named member (trigger mention, told by the rule's name): src/notifications. */
export async function notifyMembers(tx: Tx, conversation: ConversationRow, memberIds: readonly string[], origin: ReplyOrigin): Promise<void> {
  const contact = await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id);
  const labels = (await labelsOf(tx.db, [conversation.id])).get(conversation.id) ?? [];
  await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'conversation.automation_notice',
    occurredAt: tx.clock.now(),
    webhook: false,
    data: {
      conversation: formatConversation(conversation, labels),
      contact: contact ? formatContact(contact) : null,
      automation_notice: { rule_name: origin.rule?.name ?? 'Macro', member_ids: [...memberIds] },
    },
    cause: { personId: origin.author.type === 'member' ? origin.author.personId : null },
  });
}

/**
 * The saved reply, filled in for the conversation, as a reply: e-mail through the conversation's
 * channel (threaded, to the customer; an email.send job), or a chat message. A rule's reply is
 * marked automatic and goes out at most once per conversation (automation_replies_sent's key).
 */
export async function sendRuleReply(tx: Tx, conversation: ConversationRow, savedReplyId: string, origin: ReplyOrigin): Promise<ConversationRow> {
  const reply = await findSavedReply(tx.db, conversation.workspace_id, savedReplyId);
  if (!reply || (await replyProblem(tx.db, conversation, savedReplyId))) return conversation;
  if (origin.rule) {
    const inserted = await tx.db
      .insertInto('automation_replies_sent')
      .values({ rule_id: origin.rule.id, conversation_id: conversation.id, workspace_id: conversation.workspace_id, created_at: iso(tx.clock.now()) })
      .onConflict((oc) => oc.columns(['rule_id', 'conversation_id']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return conversation;
  }
  const values = await placeholderValues(tx.db, conversation, origin.personId);
  const body = renderPlaceholders(reply.body, values);
  // A formatted saved reply goes out formatted (values escaped into it); the plain part is its text.
  const html = reply.html ? renderHtmlPlaceholders(reply.html, values) : null;
  const now = tx.clock.now();
  const id = newId('m', now.getTime());
  const details = origin.rule ? { automation_rule: { id: origin.rule.id, name: origin.rule.name } } : null;
  const automatic = !!origin.rule;
  if (conversation.source !== 'email') {
    return (
      await appendMessage(tx, {
        conversation,
        message: { id, kind: 'message', direction: 'out', author: origin.author, body, html, automatic, details, createdAt: now },
      })
    ).conversation;
  }
  const channel = (await findChannel(tx.db, conversation.channel_id!))!;
  const { to, cc } = await defaultReplyRecipients(tx.db, conversation);
  // A rule writes to the customer alone (RFC 3834); a member's macro replies as they would.
  const recipients = automatic ? { to, cc: [] } : { to, cc };
  return appendMailAnswer(tx, { id, conversation, channel, author: origin.author, body, html, automatic, details, recipients, createdAt: now });
}

/** An `automation.webhook` event (the conversation, its contact, the rule) delivered to one endpoint only. */
export async function sendToEndpoint(tx: Tx, conversation: ConversationRow, endpointId: string, origin: ReplyOrigin): Promise<void> {
  const contact = await loadContactView(tx.db, conversation.workspace_id, conversation.contact_id);
  const labels = (await labelsOf(tx.db, [conversation.id])).get(conversation.id) ?? [];
  const recorded = await recordEvent(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    contactId: conversation.contact_id,
    type: 'automation.webhook',
    occurredAt: tx.clock.now(),
    webhook: false,
    data: {
      conversation: formatConversation(conversation, labels),
      contact: contact ? formatContact(contact) : null,
      rule: origin.rule ? { id: origin.rule.id, name: origin.rule.name } : null,
    },
  });
  await enqueueDeliveryTo(tx, { seq: recorded.seq, id: recorded.id, workspaceId: conversation.workspace_id }, endpointId);
}
