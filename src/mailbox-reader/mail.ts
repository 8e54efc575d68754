// Storing what the reader takes: INBOX mail as received mail (the ingress's own path, so the same
// mail arriving by SMTP too is stored once by its digest), and Sent mail as an outgoing message
// "sent from the mailbox" in the conversation it answers; svc's own replies found in Sent are the
// copies it already holds (duplicates.ts) and are not stored again.
import type { ChannelRow } from '../channels/store.js';
import { findOrCreateContactByEmail } from '../contacts/identify.js';
import { normalizeAddress } from '../contacts/service.js';
import type { Ctx } from '../context.js';
import { appendMessage, startConversation } from '../conversations/service.js';
import { announceEvents } from '../events/service.js';
import { findStoredCopy, mailIdentity, registerStoredMail } from '../mail/duplicates.js';
import { checkRawSize, storeInboundMail } from '../mail/ingest.js';
import { parseMail } from '../mail/parse.js';
import { mailMessage, writeMailFiles } from '../mail/stored-mail.js';
import { findThread } from '../mail/threading.js';
import { newId } from '../platform/ids.js';

export interface StoredResult {
  duplicate: boolean;
  conversationId: string | null;
}

/** One message of INBOX, stored as received mail of the channel. */
export async function storeReceived(ctx: Ctx, channel: ChannelRow, raw: Buffer): Promise<StoredResult> {
  checkRawSize(ctx, raw.length);
  const mail = await parseMail(raw);
  const r = await storeInboundMail(ctx, { target: { channel, workspaceId: channel.workspace_id, inboxId: channel.inbox_id, via: 'address' }, mail, raw });
  return { duplicate: r.duplicate, conversationId: r.conversation_id };
}

function address(raw: string | null | undefined): string | null {
  if (!raw) return null;
  try {
    return normalizeAddress(raw);
  } catch {
    return null;
  }
}

/** One message of the Sent folder, stored as an outgoing message of its conversation (or of a new one with its first recipient). */
export async function storeSent(ctx: Ctx, channel: ChannelRow, raw: Buffer): Promise<StoredResult> {
  checkRawSize(ctx, raw.length);
  const mail = await parseMail(raw);
  const target = { workspaceId: channel.workspace_id, inboxId: channel.inbox_id };
  const identity = mailIdentity(mail);
  const known = await findStoredCopy(ctx.db, target, identity);
  if (known) return { duplicate: true, conversationId: known.conversation_id };
  const written: string[] = [];
  try {
    const stored = await writeMailFiles(ctx, { workspaceId: channel.workspace_id, mail, raw }, written);
    const createdAt = mail.date && !Number.isNaN(mail.date.getTime()) && mail.date.getTime() <= ctx.clock.now().getTime() ? mail.date : undefined;
    const message = mailMessage(mail, stored, {
      id: newId('m', (createdAt ?? ctx.clock.now()).getTime()),
      direction: 'out',
      replyTo: null,
      details: { sent_from_mailbox: true, original_from: { name: mail.from.name ?? null, address: mail.from.address ?? null } },
      createdAt,
    });
    const result = await stored.transact(async (trx) => {
      const tx = { db: trx, clock: ctx.clock };
      if (await findStoredCopy(trx, target, identity)) return undefined;
      let conversation = await findThread(trx, { ...target, inReplyTo: mail.inReplyTo, references: mail.references });
      let messageId: string;
      if (conversation) {
        const r = await appendMessage(tx, { conversation, message });
        conversation = r.conversation;
        messageId = r.message.id;
      } else {
        const to = address(mail.to[0]?.address) ?? address(mail.cc[0]?.address);
        if (!to) return null;
        const contact = (await findOrCreateContactByEmail(tx, { workspaceId: channel.workspace_id, email: to, name: mail.to[0]?.name })).view;
        const r = await startConversation(tx, {
          conversation: {
            workspaceId: channel.workspace_id,
            inboxId: channel.inbox_id,
            contactId: contact.contact.id,
            channelId: channel.id,
            source: 'email',
            subject: mail.subject,
          },
          contact,
          message,
        });
        conversation = r.conversation;
        messageId = r.message.id;
      }
      if (!(await registerStoredMail(tx, { ...target, conversationId: conversation.id, messageId, mail: identity }))) throw new Error('stored meanwhile');
      return conversation.id;
    });
    if (result === undefined || result === null) {
      await Promise.allSettled(written.map((k) => ctx.storage.delete(k)));
      if (result === undefined) return { duplicate: true, conversationId: (await findStoredCopy(ctx.db, target, identity))?.conversation_id ?? null };
      return { duplicate: false, conversationId: null };
    }
    announceEvents(ctx);
    return { duplicate: false, conversationId: result };
  } catch (error) {
    await Promise.allSettled(written.map((k) => ctx.storage.delete(k)));
    throw error;
  }
}
