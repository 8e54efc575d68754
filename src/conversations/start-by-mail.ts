// A conversation the team starts by writing (issue 33): POST /v1/conversations. The first To is the
// conversation's contact (a contact id, or an address: an unknown one makes a contact); every To and
// Cc is a participant (Bcc never is). The conversation starts pending (the team wrote last) with the
// first message waiting to be mailed through an e-mail channel of the inbox; its Message-ID is
// registered, so the customer's answer threads into it. conversation.created and message.created are
// recorded as for any conversation.

import type { Access } from '../auth/access.js';
import { canSeeInbox } from '../auth/access.js';
import { findChannel } from '../channels/store.js';
import { insertContact } from '../contacts/service.js';
import { type ContactView, loadContactView, loadContactViewByEmail } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { findLiveInbox } from '../inboxes/store.js';
import { outboundMessageId, replyHeaders, scheduleEmailSend } from '../mail/outbound.js';
import type { Recipient } from '../mail/reply-recipients.js';
import { isMemberOf } from '../members/store.js';
import { invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { replySignatures, withSignatures } from '../saved-replies/signatures.js';
import { checkSmtp, fieldError, namedRecipients, sendingChannel, teamText } from './compose.js';
import { formatMessage } from './format.js';
import { checkInboxUploads, takeInboxUploads } from './inbox-uploads.js';
import type { Participant } from './participants.js';
import { parseSendAt, scheduleSendLater } from './send-later.js';
import { authorFromAccess, conversationView, MAX_SUBJECT_LENGTH, newConversationRow, registerMailId, startConversation } from './service.js';

export interface StartByMailInput {
  inboxId: string;
  channelId?: string;
  /** Each a contact id (ct_…) or an address (`addr` or `Name <addr>`). */
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject: string;
  body?: string;
  html?: string;
  memberId?: string;
  /** Undo send / send later (./send-later.ts). */
  sendAt?: string;
  /** Uploads of the inbox (POST /v1/inboxes/{id}/attachments), sent with the first message. */
  attachmentIds?: string[];
}

const CONTACT_ID = /^ct_[0-9A-Za-z]+$/;

export async function startConversationByMail(ctx: Ctx, access: Access, input: StartByMailInput) {
  if (input.memberId && access.actor.kind === 'member') throw invalid('member_id is for API keys; members write as themselves');
  // Authorized first: an unknown inbox, or one the caller does not reach, is 404 whatever the rest says.
  const inbox = await findLiveInbox(ctx.db, access.workspaceId, input.inboxId);
  if (!inbox || !canSeeInbox(access, inbox.id)) throw notFound('inbox');
  let channel: Awaited<ReturnType<typeof sendingChannel>>;
  if (input.channelId) {
    const named = await findChannel(ctx.db, input.channelId);
    if (!named || named.workspace_id !== access.workspaceId) throw notFound('channel');
    if (named.inbox_id !== inbox.id || named.kind !== 'email') throw fieldError('channel_id', `not an e-mail channel of inbox ${inbox.id}`);
    channel = checkSmtp(named);
  } else channel = await sendingChannel(ctx.db, { inboxId: inbox.id });
  const subject = input.subject.trim();
  if (!subject) throw fieldError('subject', 'must not be empty');
  if (subject.length > MAX_SUBJECT_LENGTH) throw fieldError('subject', `at most ${MAX_SUBJECT_LENGTH} characters`);
  const text = teamText(input, { required: true });
  const sendAt = parseSendAt(input.sendAt, ctx.clock.now());
  const attachmentIds = [...new Set(input.attachmentIds ?? [])];
  await checkInboxUploads(ctx.db, { workspaceId: access.workspaceId, inboxId: inbox.id }, attachmentIds);
  // Contacts named by id: 404 when unknown or out of reach, 400 when they have no address to write to.
  const named = new Map<string, ContactView>();
  const recipients = await namedRecipients(ctx.db, access.workspaceId, input, async (entry, path): Promise<Recipient | undefined> => {
    if (!CONTACT_ID.test(entry.trim())) return undefined;
    let view = await loadContactView(ctx.db, access.workspaceId, entry.trim());
    if (view?.contact.merged_into_id) view = await loadContactView(ctx.db, access.workspaceId, view.contact.merged_into_id);
    if (!view) throw notFound('contact');
    if (!view.emails[0]) throw fieldError(path, `contact ${view.contact.id} has no e-mail address`);
    named.set(view.emails[0], view);
    return { name: view.contact.name, address: view.emails[0] };
  });
  if (input.memberId && !(await isMemberOf(ctx.db, access.workspaceId, input.memberId))) {
    throw invalid(`member_id ${input.memberId} is not a member of this workspace`);
  }
  const result = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const first = recipients.to[0];
    const contact =
      named.get(first.address) ??
      (await loadContactViewByEmail(trx, access.workspaceId, first.address)) ??
      (await insertContact(tx, { workspaceId: access.workspaceId, name: first.name, emails: [first.address] }));
    const participants: Participant[] = [
      ...recipients.to.map((r) => ({ name: r.name, address: r.address, role: 'to' as const })),
      ...recipients.cc.map((r) => ({ name: r.name, address: r.address, role: 'cc' as const })),
    ];
    const author = authorFromAccess(access, input.memberId);
    const id = newId('m', ctx.clock.now().getTime());
    const conversationInput = {
      workspaceId: access.workspaceId,
      inboxId: inbox.id,
      contactId: contact.contact.id,
      channelId: channel.id,
      source: 'email' as const,
      subject,
      status: 'pending' as const,
      participants,
    };
    // The row as it will be (for the headers and signatures, which read the inbox and subject).
    const draft = newConversationRow(tx, conversationInput).conversation;
    const signatures = await replySignatures(trx, draft, author.type === 'member' ? author.personId : null);
    const signed = withSignatures(text.body, text.html, signatures);
    const mail = { messageId: outboundMessageId(id, channel), references: [] as string[] };
    const files = await takeInboxUploads(tx, { workspaceId: access.workspaceId, inboxId: inbox.id }, attachmentIds, signed.html);
    const started = await startConversation(tx, {
      conversation: conversationInput,
      contact,
      message: {
        id,
        kind: 'message',
        direction: 'out',
        author,
        body: signed.body,
        html: signed.html,
        subject,
        deliveryStatus: 'pending',
        sendAt,
        files,
        // Held (undo send, send later): the conversation is announced when this is handed to sending.
        details: sendAt ? { starts_conversation: true } : null,
        mail: {
          ...mail,
          headers: await replyHeaders(trx, draft, channel, { ...mail, subject, subjectAsIs: true }, recipients),
          bcc: recipients.bcc,
        },
      },
    });
    await registerMailId(tx, {
      workspaceId: access.workspaceId,
      inboxId: inbox.id,
      rfcId: mail.messageId,
      conversationId: started.conversation.id,
      messageId: id,
    });
    if (sendAt) await scheduleSendLater(tx, id, sendAt);
    else await scheduleEmailSend(tx, id);
    return started;
  });
  announceEvents(ctx);
  ctx.jobs.wake();
  return {
    conversation: await conversationView(ctx.db, result.conversation),
    message: formatMessage(result.message, result.attachments, { bcc: true }),
  };
}
