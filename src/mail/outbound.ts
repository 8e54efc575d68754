// Replies by e-mail. A reply is stored with status `pending` together with an `email.send` job (in
// the same transaction); the job sends it through the conversation's e-mail channel with the
// Message-ID, In-Reply-To and References the customer's mail client threads by.
//
// Retry schedule (the spec leaves it open): 6 attempts in all, the retries 1 min, 5 min, 15 min,
// 1 h and 4 h after the previous failure (about 5 h 21 min). Every failed attempt logs
// `email send failed, retrying`; once the last one fails the message shows `failed` with the
// SMTP server's answer.

import type { Readable } from 'node:stream';
import { type ChannelRow, findChannel, firstChannelOfInbox } from '../channels/store.js';
import type { Ctx } from '../context.js';
import { type ConversationRow, formatMailHeaders, formatMessage, htmlForMail, type MessageRow } from '../conversations/format.js';
import { attachmentsOf, conversationById, firstMessage, latestMailOf, messageById, setMessageDelivery } from '../conversations/store.js';
import type { Db, MailHeaders } from '../db/schema.js';
import { announceEvents, recordEvent } from '../events/service.js';
import { findInbox } from '../inboxes/store.js';
import { SignInRequiredError } from '../mail-accounts/grants.js';
import { tellSignInRequired } from '../mail-accounts/revoked.js';
import { mailerHeaders } from '../mailer-tenants/sending.js';
import { type Clock, HOUR, iso, MINUTE } from '../platform/clock.js';
import { conflict } from '../platform/errors.js';
import { enqueue, type JobKind, type JobRow } from '../platform/jobs.js';
import { findWorkspace } from '../workspaces/store.js';
import { MAX_REFERENCES } from './parse.js';
import { defaultReplyRecipients, type Recipient } from './reply-recipients.js';
import { channelMailDomain, channelSender, channelTransport } from './transport.js';

export const EMAIL_SEND_JOB = 'email.send';
export const SEND_RETRY_DELAYS_MS = [1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 1 * HOUR, 4 * HOUR] as const;
export const SEND_MAX_ATTEMPTS = SEND_RETRY_DELAYS_MS.length + 1;

/** Message-ID (without brackets) of a reply we send: our message id at the channel's domain. */
export function outboundMessageId(messageId: string, channel: ChannelRow): string {
  return `${messageId}@${channelMailDomain(channel)}`;
}

/** References of a new reply: the References of the latest mail in the conversation plus its Message-ID. */
export async function replyReferences(db: Db, conversationId: string): Promise<string[]> {
  const parent = await latestMailOf(db, conversationId);
  if (!parent) return [];
  const chain = [...new Set([...(parent.mail_references ? (JSON.parse(parent.mail_references) as string[]) : []), parent.mail_message_id!])];
  return chain.length <= MAX_REFERENCES ? chain : [chain[0], ...chain.slice(chain.length - (MAX_REFERENCES - 1))];
}

export async function scheduleEmailSend(tx: { db: Db; clock: Clock }, messageId: string): Promise<void> {
  // sooner: a reply sent again while its last failed run is still ending gets another run.
  await enqueue(tx.db, tx.clock, { kind: EMAIL_SEND_JOB, payload: { messageId }, uniqueKey: `${EMAIL_SEND_JOB}:${messageId}`, sooner: true });
}

function replySubject(subject: string | null): string {
  const s = (subject ?? '').trim();
  if (!s) return 'Re: your message';
  return /^re\s*:/i.test(s) ? s : `Re: ${s}`;
}

/**
 * The headers a reply goes out with: stored when the reply is written (so the API shows its
 * Message-ID and recipients at once) and again as sent. Without `recipients`: reply-all
 * (src/mail/reply-recipients.ts).
 */
export async function replyHeaders(
  db: Db,
  conversation: ConversationRow,
  channel: ChannelRow,
  mail: { messageId: string; references: string[]; subject: string | null; subjectAsIs?: boolean },
  recipients?: { to: Recipient[]; cc: Recipient[] },
): Promise<MailHeaders> {
  const inbox = await findInbox(db, conversation.inbox_id);
  if (!inbox) throw new Error(`inbox ${conversation.inbox_id} of conversation ${conversation.id} is gone`);
  const { to, cc } = recipients ?? (await defaultReplyRecipients(db, conversation));
  return {
    message_id: mail.messageId,
    in_reply_to: mail.references.length ? [mail.references[mail.references.length - 1]] : [],
    references: mail.references,
    from: channelSender(channel, inbox.name),
    to,
    cc,
    // Forwards and the first mail of a conversation the team started answer nothing: no "Re:".
    subject: mail.subjectAsIs ? (mail.subject ?? conversation.subject ?? '') : replySubject(conversation.subject ?? mail.subject),
  };
}

/** The SMTP server's answer or the connection error, without addresses (for logs). */
export function describeSendError(error: unknown): string {
  const e = error as { message?: string; response?: string; responseCode?: number; code?: string };
  const text = e.response ?? e.message ?? String(error);
  return text.replace(/[^\s<>@]+@[^\s<>@]+/g, '[address]').slice(0, 500);
}

class SendFailure extends Error {}

/** An address for nodemailer, which encodes the name. */
const mailboxOf = (r: Recipient) => (r.name ? { name: r.name, address: r.address } : r.address);

async function sendOnce(ctx: Ctx, message: MessageRow): Promise<MailHeaders> {
  const conversation = await conversationById(ctx.db, message.conversation_id);
  if (!conversation) throw new SendFailure('the conversation no longer exists');
  let channel = conversation.channel_id ? await findChannel(ctx.db, conversation.channel_id) : undefined;
  // A chat message forwarded by mail goes through the inbox's first e-mail channel.
  if (channel?.kind !== 'email' && message.forwarded_message_id) channel = await firstChannelOfInbox(ctx.db, conversation.inbox_id, 'email');
  if (!channel || channel.kind !== 'email') throw new SendFailure('the conversation has no e-mail channel');
  const references = message.mail_references ? (JSON.parse(message.mail_references) as string[]) : [];
  // The recipients stored when the reply was written; a reply written before any was known (the
  // contact had no address then) takes the conversation's reply-all now.
  const stored = formatMailHeaders(message);
  const recipients = stored?.to.length ? { to: stored.to, cc: stored.cc } : undefined;
  const subjectAsIs = !!message.forwarded_message_id || (references.length === 0 && (await firstMessage(ctx.db, conversation.id))?.id === message.id);
  const sent = await replyHeaders(
    ctx.db,
    conversation,
    channel,
    { messageId: message.mail_message_id!, references, subject: message.subject, subjectAsIs },
    recipients,
  );
  if (sent.to.length === 0) throw new SendFailure('the contact has no e-mail address');
  const bcc = recipients && message.mail_bcc ? (JSON.parse(message.mail_bcc) as Recipient[]) : [];
  const files = (await attachmentsOf(ctx.db, [message.id])).get(message.id) ?? [];
  const streams: Readable[] = [];
  // Managed channels (an Amazon SES tenant per inbox) name the tenant and configuration set.
  const headers: Record<string, string> = { ...(await mailerHeaders(ctx, channel)) };
  // Automatic answers (the inbox greeting) say so, so that other robots do not answer them (RFC 3834).
  if (message.automatic === 1) Object.assign(headers, { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' });
  const transport = channelTransport(ctx, channel);
  try {
    const attachments = [];
    for (const f of files) {
      const content = await ctx.storage.get(f.storage_key);
      streams.push(content);
      attachments.push({ filename: f.filename, contentType: f.content_type, content, cid: f.inline && f.content_id ? f.content_id : undefined });
    }
    await transport.sendMail({
      from: { name: sent.from!.name ?? '', address: sent.from!.address },
      to: sent.to.map(mailboxOf),
      cc: sent.cc.length ? sent.cc.map(mailboxOf) : undefined,
      // nodemailer puts Bcc in the envelope only, never in the message's headers.
      bcc: bcc.length ? bcc.map(mailboxOf) : undefined,
      subject: sent.subject!,
      text: message.body,
      html: message.html ? htmlForMail(message.html, files) : undefined,
      messageId: `<${sent.message_id}>`,
      inReplyTo: sent.in_reply_to.length ? `<${sent.in_reply_to[0]}>` : undefined,
      references: references.length ? references.map((r) => `<${r}>`).join(' ') : undefined,
      attachments,
      headers,
    });
  } finally {
    for (const s of streams) s.destroy();
    transport.close();
  }
  return sent;
}

/**
 * Records that a reply was sent or failed for good, and tells open panels with a `message.updated`
 * event (realtime and GET /v1/events only: never a webhook, the spec's events have no such type).
 */
async function setDeliveryState(
  ctx: Ctx,
  message: MessageRow,
  set: Pick<MessageRow, 'delivery_status' | 'delivery_attempts' | 'delivery_error'> & {
    delivery_retry_at?: string | null;
    sent_at?: string;
    mail_headers?: string;
  },
  alsoInTransaction?: (tx: { db: Db; clock: Clock }) => Promise<void>,
) {
  await ctx.db.transaction().execute(async (trx) => {
    await setMessageDelivery(trx, message.id, set);
    await alsoInTransaction?.({ db: trx, clock: ctx.clock });
    const conversation = await conversationById(trx, message.conversation_id);
    if (!conversation) return;
    const files = await attachmentsOf(trx, [message.id]);
    await recordEvent(
      { db: trx, clock: ctx.clock },
      {
        workspaceId: message.workspace_id,
        inboxId: conversation.inbox_id,
        type: 'message.updated',
        occurredAt: ctx.clock.now(),
        data: {
          message: formatMessage({ ...message, ...set }, files.get(message.id) ?? []),
          conversation: { id: conversation.id, inbox_id: conversation.inbox_id },
        },
        webhook: false,
      },
    );
  });
  announceEvents(ctx);
}

/**
 * Sends a reply that failed for good once more, with a fresh set of attempts; or tries a reply that
 * is waiting for its next attempt now instead (its attempts go on counting).
 */
export async function retryFailedReply(ctx: Ctx, message: MessageRow): Promise<void> {
  if (message.kind !== 'message' || message.direction !== 'out') throw conflict('only a reply can be sent again', 'message_state', { status: null });
  if (message.delivery_status === 'pending' && message.delivery_error !== null) {
    await setDeliveryState(
      ctx,
      message,
      { delivery_status: 'pending', delivery_attempts: message.delivery_attempts, delivery_error: null, delivery_retry_at: null },
      (tx) => scheduleEmailSend(tx, message.id),
    );
    return;
  }
  if (message.delivery_status !== 'failed') {
    throw conflict('only a reply whose sending failed or is waiting to be tried again can be sent again', 'message_state', { status: message.delivery_status });
  }
  await setDeliveryState(ctx, message, { delivery_status: 'pending', delivery_attempts: 0, delivery_error: null, delivery_retry_at: null }, (tx) =>
    scheduleEmailSend(tx, message.id),
  );
}

export function emailSendJob(ctx: Ctx): JobKind<{ messageId: string }> {
  return {
    kind: EMAIL_SEND_JOB,
    leaseMs: 5 * MINUTE,
    async run({ messageId }, job: JobRow) {
      const message = await messageById(ctx.db, messageId);
      if (!message || message.delivery_status !== 'pending') return;
      // A deleted workspace sends nothing more (its data is on the way out).
      const ws = await findWorkspace(ctx.db, message.workspace_id);
      if (!ws || ws.deleted_at) return;
      const attempt = job.attempts;
      let sent: MailHeaders;
      try {
        sent = await sendOnce(ctx, message);
      } catch (error) {
        const reason = describeSendError(error);
        // A refused sign-in (src/mail-accounts) fails the reply at once: it goes again after a new sign-in.
        const signIn = error instanceof SignInRequiredError ? error : undefined;
        const final = attempt >= SEND_MAX_ATTEMPTS || !!signIn;
        const retryInMs = final ? undefined : SEND_RETRY_DELAYS_MS[Math.max(0, attempt - 1)];
        ctx.log.warn('email send failed, retrying', {
          message_id: message.id,
          conversation_id: message.conversation_id,
          attempt,
          max_attempts: SEND_MAX_ATTEMPTS,
          retry_in_seconds: retryInMs === undefined ? null : retryInMs / 1000,
          error: reason,
        });
        const retryAt = final ? null : iso(ctx.clock.now().getTime() + retryInMs!);
        // Open panels hear of every failed attempt: "Not sent yet — will retry at …", not "Sending…".
        await setDeliveryState(
          ctx,
          message,
          { delivery_attempts: attempt, delivery_error: reason, delivery_status: final ? 'failed' : 'pending', delivery_retry_at: retryAt },
          signIn ? (tx) => tellSignInRequired(tx, signIn, message.conversation_id) : undefined,
        );
        ctx.metrics.mailSent.inc({ outcome: final ? 'failed' : 'retried' });
        if (final) {
          ctx.log.error('email send failed, message marked failed', { message_id: message.id, conversation_id: message.conversation_id, attempts: attempt });
          return;
        }
        return { retryAt: new Date(ctx.clock.now().getTime() + retryInMs!) };
      }
      await setDeliveryState(ctx, message, {
        delivery_status: 'sent',
        delivery_attempts: attempt,
        delivery_error: null,
        delivery_retry_at: null,
        sent_at: iso(ctx.clock.now()),
        mail_headers: JSON.stringify(sent),
      });
      ctx.metrics.mailSent.inc({ outcome: 'sent' });
      ctx.log.info('email sent', { message_id: message.id, conversation_id: message.conversation_id, attempt });
    },
  };
}
