// Inbound mail, whichever way it arrives (SMTP listener, POST /v1/ingress/email, svc ingest-email):
// parse once, then per receiving inbox store the original .eml and the attachments, and in one
// transaction find or create the contact, thread or start the conversation, add the message and
// record the events. The caller answers (SMTP 250, HTTP 201) only after that commit.
import { createAnonymousContact, findOrCreateContactByEmail } from '../contacts/identify.js';
import { normalizeAddress } from '../contacts/service.js';
import type { ContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { applyConversationChanges } from '../conversations/changes.js';
import type { ConversationRow } from '../conversations/format.js';
import { saveParticipants } from '../conversations/participants.js';
import { appendMessage, startConversation } from '../conversations/service.js';
import { retryOnUniqueViolation } from '../db/retry.js';
import { announceEvents } from '../events/service.js';
import { invalid, notFound, tooLarge } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { findStoredCopy, mailIdentity, registerStoredMail } from './duplicates.js';
import { claimRecipients, type MailHandlers, offerMessage } from './handlers.js';
import { type InboundMail, parseMail } from './parse.js';
import { type MailTarget, resolveRecipients } from './recipients.js';
import { participantsAfterInbound } from './reply-recipients.js';
import { mailMessage, writeMailFiles } from './stored-mail.js';
import { findThread } from './threading.js';

export type IngestVia = 'smtp' | 'http' | 'cli';

export interface IngestResult {
  inbox_id: string;
  conversation_id: string;
  message_id: string;
  /** The inbox had this message already (the same mail, see mailDigest); nothing was stored. */
  duplicate: boolean;
  new_conversation: boolean;
}

class DuplicateMail extends Error {}

export function checkRawSize(ctx: Pick<Ctx, 'config'>, size: number): void {
  if (size === 0) throw invalid('the message is empty');
  if (size > ctx.config.ingressMaxBytes) throw tooLarge(`the message is larger than ${ctx.config.ingressMaxBytes} bytes`);
}

/** Delivers one raw message to the channels among `recipients`; 404 when none is a channel address. */
export async function ingestEmail(
  ctx: Ctx,
  input: {
    raw: Buffer;
    recipients: readonly string[];
    envelopeFrom?: string | null;
    via: IngestVia;
    /** The features that take mail before it is stored (src/server/mail-handlers.ts). */
    handlers: MailHandlers;
    targets?: MailTarget[];
    /** Where MIME parsing runs (the SMTP listener's worker pool); default this thread. */
    parse?: (raw: Buffer) => Promise<InboundMail>;
  },
): Promise<IngestResult[]> {
  checkRawSize(ctx, input.raw.length);
  // Addresses a feature owns (broadcast return paths) hand it the message; it is no conversation.
  const { claimed, others } = await claimRecipients(ctx, input.handlers, input.recipients);
  if (claimed.size) {
    for (const [handler, addresses] of claimed) await handler.receive(ctx, input.raw, addresses);
    if (others.length === 0 && !input.targets?.length) return [];
  }
  let targets = input.targets ?? (others.length ? await resolveRecipients(ctx, others) : []);
  if (targets.length === 0 && others.length) throw notFound('e-mail channel for the recipients');
  const mail = await (input.parse ?? parseMail)(input.raw);
  // Without named recipients (a relay posting the message alone), the headers say where it goes.
  if (targets.length === 0) targets = await resolveRecipients(ctx, mail.headerRecipients);
  if (targets.length === 0) throw notFound('e-mail channel for the recipients');
  // Features take what is theirs (a migration's test message, a forwarding confirmation) first.
  targets = await offerMessage(ctx, input.handlers, mail, targets);
  const results: IngestResult[] = [];
  for (const target of targets) {
    const result = await storeInboundMail(ctx, { target, mail, raw: input.raw, envelopeFrom: input.envelopeFrom ?? null });
    ctx.metrics.mailReceived.inc({ via: input.via, result: result.duplicate ? 'duplicate' : 'stored' });
    // Per-mail detail at debug level (svc_mail_received_total counts them); failures are errors.
    ctx.log.debug(result.duplicate ? 'mail received, duplicate' : 'mail received', {
      via: input.via,
      channel_id: target.channel.id,
      inbox_id: result.inbox_id,
      conversation_id: result.conversation_id,
      message_id: result.message_id,
      bytes: input.raw.length,
      automatic: mail.automatic,
    });
    results.push(result);
  }
  return results;
}

function senderAddress(mail: InboundMail, envelopeFrom: string | null): string | null {
  for (const candidate of [mail.from.address, envelopeFrom]) {
    if (!candidate) continue;
    try {
      return normalizeAddress(candidate);
    } catch {
      /* try the next one */
    }
  }
  return null;
}

function replyAddress(mail: InboundMail, sender: string | null): string | null {
  if (mail.replyTo) {
    try {
      return normalizeAddress(mail.replyTo);
    } catch {
      /* fall back to the sender */
    }
  }
  return sender;
}

/**
 * Stores one parsed mail in one inbox. Reusable by other ways of bringing mail in: `quiet` records
 * no events (imported history), `imported` marks new conversations, `receivedAt` keeps original
 * times, `keepRaw: false` skips the original .eml.
 */
export async function storeInboundMail(
  ctx: Ctx,
  input: {
    target: MailTarget;
    mail: InboundMail;
    raw: Buffer;
    envelopeFrom?: string | null;
    quiet?: boolean;
    imported?: boolean;
    receivedAt?: Date;
    keepRaw?: boolean;
  },
): Promise<IngestResult> {
  const { target, mail } = input;
  const { workspaceId, inboxId } = target;
  const identity = mailIdentity(mail);

  // Files first (./stored-mail.ts): if the process dies before the commit they are unreferenced, never missing.
  const written: string[] = [];
  const messageId = newId('m', (input.receivedAt ?? ctx.clock.now()).getTime());
  try {
    const stored = await writeMailFiles(ctx, { workspaceId, mail, raw: input.raw, keepRaw: input.keepRaw }, written);
    const sender = senderAddress(mail, input.envelopeFrom ?? null);
    const message = mailMessage(mail, stored, { id: messageId, direction: 'in', replyTo: replyAddress(mail, sender), createdAt: input.receivedAt });
    // Inside a caller's transaction (an import) the work joins it; otherwise it is group-committed.
    const result = await retryOnUniqueViolation(() =>
      stored.transact(async (trx) => {
        const tx = { db: trx, clock: ctx.clock };
        if (await findStoredCopy(trx, target, identity)) throw new DuplicateMail();
        const contact: ContactView = sender
          ? (await findOrCreateContactByEmail(tx, { workspaceId, email: sender, name: mail.from.name, quiet: input.quiet })).view
          : await createAnonymousContact(tx, { workspaceId, name: mail.from.name ?? 'Unknown sender' });
        const author = { type: 'contact' as const, contactId: contact.contact.id };
        let conversation = await findThread(trx, { workspaceId, inboxId, inReplyTo: mail.inReplyTo, references: mail.references });
        let created = false;
        if (conversation) {
          // A customer's reply reopens a closed conversation; auto-replies and reports do not.
          if (conversation.status === 'closed' && !mail.automatic) {
            ({ conversation } = await applyConversationChanges(tx, {
              conversation,
              patch: { status: 'open' },
              author,
              reason: 'customer_reply',
              quiet: input.quiet,
            }));
          }
          const participants = await participantsAfterInbound(trx, {
            conversation,
            created: false,
            fromContact: conversation.contact_id === contact.contact.id,
            sender,
            mail,
            channel: target.channel,
          });
          if (participants) conversation = await saveParticipants(trx, conversation, participants);
          await appendMessage(tx, {
            conversation,
            contact: conversation.contact_id === contact.contact.id ? contact : undefined,
            message: { ...message, author },
            quiet: input.quiet,
          });
        } else {
          const participants = await participantsAfterInbound(trx, {
            conversation: { workspace_id: workspaceId, participants: null } as ConversationRow,
            created: true,
            fromContact: true,
            sender,
            mail,
            channel: target.channel,
          });
          ({ conversation } = await startConversation(tx, {
            conversation: {
              workspaceId,
              inboxId,
              contactId: contact.contact.id,
              channelId: target.channel.id,
              source: 'email',
              subject: mail.subject,
              imported: input.imported,
              participants,
            },
            contact,
            message: { ...message, author },
            quiet: input.quiet,
          }));
          created = true;
        }
        if (!(await registerStoredMail(tx, { workspaceId, inboxId, conversationId: conversation.id, messageId, mail: identity }))) throw new DuplicateMail();
        return { inbox_id: inboxId, conversation_id: conversation.id, message_id: messageId, duplicate: false, new_conversation: created };
      }),
    );
    if (!input.quiet) announceEvents(ctx);
    return result;
  } catch (error) {
    await Promise.allSettled(written.map((key) => ctx.storage.delete(key)));
    if (error instanceof DuplicateMail) {
      const known = (await findStoredCopy(ctx.db, target, identity))!;
      // The stored copy may be another sender's mail committed a moment ago: it is on disk before this one is acknowledged.
      if (!ctx.db.isTransaction) await ctx.writes.flush();
      return { inbox_id: inboxId, ...known, duplicate: true, new_conversation: false };
    }
    throw error;
  }
}
