// The inbox greeting: an optional automatic answer to the first mail of a new conversation, sent
// once through the inbox's e-mail channel (a message of the conversation, marked automatic, mailed
// with Auto-Submitted: auto-replied and threaded like a reply).
//
// It runs as a reaction to message.created (the first message of a conversation) inside the transaction that stored the mail, and
// writes the greeting message and its email.send job there, so a crash loses or repeats nothing.
// Imported history records no events, so it is never greeted. Never greeted either: automatic mail
// (isAutomatic in src/mail/parse.ts), noreply-style and list addresses, the team's own addresses
// (members' and the workspace's e-mail channels'), a contact greeted in the last 24 hours, and
// mail that arrives while a migration into the inbox is under way (the old mailbox is still live).
import type { Access } from '../auth/access.js';
import { channelAddresses } from '../channels/service.js';
import { channelsOfInbox, findChannel } from '../channels/store.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { appendMessage, registerMailId, type Tx } from '../conversations/service.js';
import { findConversation, firstMessage } from '../conversations/store.js';
import { deleteChosen } from '../db/bulk.js';
import type { Db, InboxGreetingsTable } from '../db/schema.js';
import { announceEvents } from '../events/service.js';
import { resolveInbox } from '../inboxes/service.js';
import { outboundMessageId, replyHeaders, replyReferences, scheduleEmailSend } from '../mail/outbound.js';
import { defaultReplyRecipients } from '../mail/reply-recipients.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { migrationUnderwayInto } from '../mailbox-migration/store.js';
import { memberAddresses } from '../members/service.js';
import { iso, MINUTE } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import type { JobKind } from '../platform/jobs.js';
import { charCount } from '../platform/text.js';
import { DEFAULT_GREETING, formatGreeting, type GreetingHeld } from './format.js';
import { GREETING_JOB, type GreetingJobPayload } from './reaction.js';
import { customerLocale, GREETING_INTERVAL_MS, type GreetingLocale, isNoReplyAddress } from './rules.js';

export const GREETING_MAX_CHARS = 5000;

export async function getGreeting(ctx: Pick<Ctx, 'db'>, access: Access, inboxRef: string) {
  const inbox = await resolveInbox(ctx, access.workspaceId, inboxRef);
  const row = await ctx.db.selectFrom('inbox_greetings').selectAll().where('inbox_id', '=', inbox.id).executeTakeFirst();
  return { inboxId: inbox.id, greeting: formatGreeting(row, await greetingHeld(ctx.db, inbox.id)) };
}

/**
 * Why no greeting would go out from this inbox now, whatever the mail (the rules of the whole inbox
 * in greetInTransaction): a migration into it is under way, or none of its e-mail channels can send.
 */
export async function greetingHeld(db: Db, inboxId: string): Promise<GreetingHeld | null> {
  if (await migrationUnderwayInto(db, inboxId)) return 'migration_underway';
  if (!(await channelsOfInbox(db, inboxId, 'email')).some(hasSmtpAccount)) return 'no_outgoing_mail';
  return null;
}

function checkText(text: string | undefined, locale: GreetingLocale): string | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!trimmed) throw invalid(`text.${locale} must not be empty`);
  if (charCount(trimmed) > GREETING_MAX_CHARS) throw invalid(`text.${locale} must be at most ${GREETING_MAX_CHARS} characters`);
  return trimmed;
}

export async function setGreeting(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  access: Access,
  inboxId: string,
  input: { enabled?: boolean; text?: Partial<Record<GreetingLocale, string>> },
) {
  const en = checkText(input.text?.en, 'en');
  const tr = checkText(input.text?.tr, 'tr');
  const now = iso(ctx.clock.now());
  const current = await ctx.db.selectFrom('inbox_greetings').selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();
  const row: InboxGreetingsTable = {
    inbox_id: inboxId,
    workspace_id: access.workspaceId,
    enabled: input.enabled === undefined ? (current?.enabled ?? 0) : input.enabled ? 1 : 0,
    text_en: en ?? current?.text_en ?? DEFAULT_GREETING.en,
    text_tr: tr ?? current?.text_tr ?? DEFAULT_GREETING.tr,
    updated_at: now,
  };
  await ctx.db
    .insertInto('inbox_greetings')
    .values(row)
    .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ enabled: row.enabled, text_en: row.text_en, text_tr: row.text_tr, updated_at: now }))
    .execute();
  return formatGreeting(row, await greetingHeld(ctx.db, inboxId));
}

/** Whether the contact was greeted (by any inbox) within the interval. */
async function greetedRecently(db: Db, contactId: string, now: Date): Promise<boolean> {
  const since = iso(new Date(now.getTime() - GREETING_INTERVAL_MS));
  const row = await db
    .selectFrom('greetings_sent')
    .select('message_id')
    .where('contact_id', '=', contactId)
    .where('sent_at', '>', since)
    .limit(1)
    .executeTakeFirst();
  return !!row;
}

/** The `greeting.send` job: greets the first mail of a new e-mail conversation when every rule allows. */
export async function sendGreeting(ctx: Pick<Ctx, 'db' | 'clock' | 'hub' | 'jobs'>, job: GreetingJobPayload): Promise<boolean> {
  const sent = await ctx.db.transaction().execute((trx) => greetInTransaction({ db: trx, clock: ctx.clock }, job));
  if (sent) {
    announceEvents(ctx);
    ctx.jobs.wake();
  }
  return sent;
}

async function greetInTransaction(tx: Tx, job: GreetingJobPayload): Promise<boolean> {
  const db = tx.db;
  const conversation = await findConversation(db, job.workspaceId, job.conversationId);
  if (!conversation || conversation.imported === 1 || conversation.spam === 1 || !conversation.channel_id || conversation.source !== 'email') return false;
  const settings = await db.selectFrom('inbox_greetings').selectAll().where('inbox_id', '=', conversation.inbox_id).executeTakeFirst();
  if (!settings || settings.enabled !== 1) return false;
  if (await db.selectFrom('greetings_sent').select('message_id').where('conversation_id', '=', conversation.id).executeTakeFirst()) return false;
  const first = await firstMessage(db, conversation.id);
  if (!first || first.id !== job.messageId || first.direction !== 'in' || first.automatic === 1 || first.imported_at) return false;
  const recipient = first.mail_reply_to?.toLowerCase();
  if (!recipient || isNoReplyAddress(recipient)) return false;
  // Also the sender, when Reply-To names someone else: a noreply sender is automatic mail.
  const sender = (JSON.parse(first.mail_headers ?? 'null') as { from?: { address?: string } | null } | null)?.from?.address?.toLowerCase();
  if (sender && isNoReplyAddress(sender)) return false;
  const team = new Set([...(await memberAddresses(db, conversation.workspace_id)), ...(await channelAddresses(db, conversation.workspace_id))]);
  if (team.has(recipient) || (sender && team.has(sender))) return false;
  const now = tx.clock.now();
  if (await greetedRecently(db, conversation.contact_id, now)) return false;
  if (await migrationUnderwayInto(db, conversation.inbox_id)) return false;
  const channel = await findChannel(db, conversation.channel_id);
  if (!channel || !hasSmtpAccount(channel)) return false;

  const inbox = await resolveInbox({ db }, conversation.workspace_id, conversation.inbox_id);
  const contact = await loadContactView(db, conversation.workspace_id, conversation.contact_id);
  const locale = customerLocale(inbox.locale, contact?.contact.attributes);
  const body = locale === 'tr' ? settings.text_tr : settings.text_en;

  const id = newId('m', now.getTime());
  const mail = { messageId: outboundMessageId(id, channel), references: await replyReferences(db, conversation.id) };
  // An automatic answer goes to its sender alone, never to everyone they copied (RFC 3834).
  const { to } = await defaultReplyRecipients(db, conversation);
  const headers = await replyHeaders(db, conversation, channel, { ...mail, subject: conversation.subject }, { to, cc: [] });
  await appendMessage(tx, {
    conversation,
    contact,
    message: {
      id,
      kind: 'message',
      direction: 'out',
      author: { type: 'system' },
      body,
      subject: conversation.subject,
      automatic: true,
      details: { greeting: true, locale },
      deliveryStatus: 'pending',
      mail: { ...mail, headers },
      createdAt: now,
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
  await db
    .insertInto('greetings_sent')
    .values({
      message_id: id,
      workspace_id: conversation.workspace_id,
      inbox_id: conversation.inbox_id,
      contact_id: conversation.contact_id,
      conversation_id: conversation.id,
      sent_at: iso(now),
    })
    .execute();
  return true;
}

export function greetingJob(ctx: Ctx): JobKind<GreetingJobPayload> {
  return { kind: GREETING_JOB, leaseMs: MINUTE, run: async (payload) => void (await sendGreeting(ctx, payload)) };
}

/** Workspace deletion step: the greeting log (settings go with the inboxes). */
export async function deleteWorkspaceGreetings(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  return deleteChosen(
    ctx.db,
    'greetings_sent',
    'message_id',
    ctx.db.selectFrom('greetings_sent').select('message_id').where('workspace_id', '=', workspaceId),
    batch,
  );
}

/** Retention: the log is only read for the last 24 hours. */
export async function deleteOldGreetingLog(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  const before = iso(new Date(now.getTime() - 2 * GREETING_INTERVAL_MS));
  return deleteChosen(ctx.db, 'greetings_sent', 'message_id', ctx.db.selectFrom('greetings_sent').select('message_id').where('sent_at', '<', before), batch);
}
