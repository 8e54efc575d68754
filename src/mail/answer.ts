// A mail the server writes into a conversation by itself or for a rule (the greeting, the away
// reply, a rule's or macro's saved reply): a message threaded like a reply, its Message-ID
// registered for threading, and its email.send job, all in the caller's transaction.
import type { ChannelRow } from '../channels/store.js';
import type { ContactView } from '../contacts/store.js';
import type { ConversationRow } from '../conversations/format.js';
import { type Author, appendMessage, registerMailId, type Tx } from '../conversations/service.js';
import { outboundMessageId, replyHeaders, replyReferences, scheduleEmailSend } from './outbound.js';
import type { Recipient } from './reply-recipients.js';

export async function appendMailAnswer(
  tx: Tx,
  input: {
    id: string;
    conversation: ConversationRow;
    contact?: ContactView;
    channel: ChannelRow;
    author: Author;
    body: string;
    /** Formatted text (a formatted saved reply); the mail is then multipart/alternative. */
    html?: string | null;
    automatic: boolean;
    details: Record<string, unknown> | null;
    recipients: { to: Recipient[]; cc: Recipient[] };
    createdAt: Date;
  },
): Promise<ConversationRow> {
  const { conversation, channel, id } = input;
  const mail = { messageId: outboundMessageId(id, channel), references: await replyReferences(tx.db, conversation.id) };
  const headers = await replyHeaders(tx.db, conversation, channel, { ...mail, subject: conversation.subject }, input.recipients);
  const appended = await appendMessage(tx, {
    conversation,
    contact: input.contact,
    message: {
      id,
      kind: 'message',
      direction: 'out',
      author: input.author,
      body: input.body,
      html: input.html ?? null,
      subject: conversation.subject,
      automatic: input.automatic,
      details: input.details,
      deliveryStatus: 'pending',
      mail: { ...mail, headers },
      createdAt: input.createdAt,
    },
  });
  await registerMailId(tx, {
    workspaceId: conversation.workspace_id,
    inboxId: conversation.inbox_id,
    rfcId: mail.messageId,
    conversationId: conversation.id,
    messageId: id,
  });
  await scheduleEmailSend(tx, id);
  return appended.conversation;
}
