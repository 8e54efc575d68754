// Messages written by the team through the API: replies (mailed through the conversation's e-mail
// channel, with the member's and the inbox's signatures: src/saved-replies/signatures.ts) and notes
// (never mailed, never signed).

import type { Access } from '../auth/access.js';
import { findChannel } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { outboundMessageId, replyHeaders, replyReferences, scheduleEmailSend } from '../mail/outbound.js';
import { plainFromHtml } from '../mail/plain-text.js';
import { replyRecipients } from '../mail/reply-recipients.js';
import { sanitizeMailHtml } from '../mail/sanitize.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { isMemberOf } from '../members/store.js';
import { conflict, invalid } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { replySignatures, withSignatures } from '../saved-replies/signatures.js';
import { removeDraft } from './drafts.js';
import { formatMessage } from './format.js';
import { participantsOf, saveParticipants, withParticipants } from './participants.js';
import { parseSendAt, scheduleSendLater, sendAtError } from './send-later.js';
import { appendMessage, authorFromAccess, getConversationFor, type NewMessage, registerMailId } from './service.js';

export const MAX_API_BODY_CHARS = 200_000;

export interface NewTeamMessage {
  kind: 'message' | 'note';
  /** Plain text; ignored when `html` is given (the plain text is then made from the html). */
  body?: string;
  html?: string;
  attachmentIds?: string[];
  /** API keys may write on behalf of a member of the workspace. */
  memberId?: string;
  /** E-mail replies: each named field replaces reply-all's (src/mail/reply-recipients.ts). */
  to?: string[];
  cc?: string[];
  bcc?: string[];
  /** Undo send / send later: held until then (./send-later.ts). */
  sendAt?: string;
  /** Send later: kept back (a note for its author instead) when the customer writes before then. */
  unlessCustomerReplies?: boolean;
}

export async function createTeamMessage(ctx: Ctx, access: Access, conversationId: string, input: NewTeamMessage) {
  if (input.memberId && access.actor.kind === 'member') throw invalid('member_id is for API keys; members write as themselves');
  // One stored representation: the sanitized html, with the plain text (stored and mailed as the
  // text/plain part) made from it, so the two parts of the mail cannot say different things.
  const html = input.html ? sanitizeMailHtml(input.html) : null;
  const body = html !== null ? plainFromHtml(html) : (input.body ?? '');
  const hasImage = html !== null && /<img\s/i.test(html);
  if (!body.trim() && !hasImage && !input.attachmentIds?.length) throw invalid(input.html ? 'html must not be empty' : 'body must not be empty');
  if (charCount(body) > MAX_API_BODY_CHARS) throw invalid(`body must be at most ${MAX_API_BODY_CHARS} characters`);
  const named = (['to', 'cc', 'bcc'] as const).filter((f) => input[f] !== undefined);
  const sendAt = parseSendAt(input.sendAt, ctx.clock.now());
  const result = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    let conversation = await getConversationFor(tx, access, conversationId);
    if (named.length && input.kind === 'note')
      throw invalid(`${named[0]}: a note is never mailed`, { issues: [{ path: named[0], message: 'a note is never mailed' }] });
    if (input.memberId) {
      if (!(await isMemberOf(trx, access.workspaceId, input.memberId))) throw invalid(`member_id ${input.memberId} is not a member of this workspace`);
    }
    const id = newId('m', ctx.clock.now().getTime());
    const message: NewMessage = {
      id,
      kind: input.kind,
      direction: 'out',
      author: authorFromAccess(access, input.memberId),
      body,
      html,
      attachmentIds: input.attachmentIds,
    };
    let mailed = false;
    if (sendAt && input.kind === 'note') throw sendAtError('a note is never mailed');
    if (input.kind === 'message') {
      const channel = conversation.channel_id ? await findChannel(trx, conversation.channel_id) : undefined;
      if (conversation.source === 'email' && (!channel || channel.kind !== 'email')) {
        throw conflict('this conversation’s inbox has no e-mail channel to send the reply through', 'no_email_channel');
      }
      if (named.length && channel?.kind !== 'email') {
        throw invalid(`${named[0]}: only e-mail replies have recipients`, { issues: [{ path: named[0], message: 'only e-mail replies have recipients' }] });
      }
      if (channel?.kind === 'email') {
        if (!hasSmtpAccount(channel))
          throw conflict(`channel ${channel.id} has no SMTP account; set its SMTP server, user name and password first`, 'smtp_not_configured');
        message.deliveryStatus = 'pending';
        message.subject = conversation.subject;
        const recipients = await replyRecipients(trx, conversation, input);
        const mail = { messageId: outboundMessageId(id, channel), references: await replyReferences(trx, conversation.id) };
        message.mail = {
          ...mail,
          headers: await replyHeaders(trx, conversation, channel, { ...mail, subject: conversation.subject }, recipients),
          bcc: recipients.bcc,
        };
        // Addresses the team wrote to become participants (Bcc never does).
        if (input.to !== undefined || input.cc !== undefined) {
          const added = [...recipients.to.map((r) => ({ ...r, role: 'to' as const })), ...recipients.cc.map((r) => ({ ...r, role: 'cc' as const }))];
          const next = withParticipants(participantsOf(conversation) ?? [], added);
          if (JSON.stringify(next) !== conversation.participants) conversation = await saveParticipants(trx, conversation, next);
        }
        // Stored with the signatures, so the message shows exactly what is mailed.
        const signatures = await replySignatures(trx, conversation, message.author.type === 'member' ? message.author.personId : null);
        Object.assign(message, withSignatures(message.body, message.html ?? null, signatures));
        mailed = true;
        message.sendAt = sendAt;
      }
    }
    if (sendAt && !mailed) throw sendAtError('only e-mail replies can be sent later');
    if (input.unlessCustomerReplies) {
      if (!sendAt) throw invalid('unless_customer_replies needs send_at', { issues: [{ path: 'unless_customer_replies', message: 'needs send_at' }] });
      message.details = { ...message.details, unless_customer_replies: true };
    }
    const appended = await appendMessage(tx, { conversation, message });
    // Sent: the member's draft here is done with.
    if (access.actor.kind === 'member') await removeDraft(trx, conversation.id, access.actor.personId);
    if (mailed) {
      await registerMailId(tx, {
        workspaceId: conversation.workspace_id,
        inboxId: conversation.inbox_id,
        rfcId: message.mail!.messageId!,
        conversationId: conversation.id,
        messageId: id,
      });
      if (sendAt) await scheduleSendLater(tx, id, sendAt);
      else await scheduleEmailSend(tx, id);
    }
    return appended;
  });
  announceEvents(ctx);
  ctx.jobs.wake();
  return formatMessage(result.message, result.attachments, { bcc: true });
}
