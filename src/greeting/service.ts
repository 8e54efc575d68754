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
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import { appendMessage, registerMailId, type Tx } from '../conversations/service.js';
import { findConversation, firstMessage } from '../conversations/store.js';
import type { Db, InboxGreetingsTable } from '../db/schema.js';
import { DEFAULT_GREETING, formatGreeting } from './format.js';
import type { NewEvent } from '../events/service.js';
import { resolveInbox } from '../inboxes/service.js';
import { outboundMessageId, replyHeaders, replyReferences, scheduleEmailSend } from '../mail/outbound.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { migrationUnderwayInto } from '../mailbox-migration/store.js';
import { memberAddresses } from '../members/service.js';
import { DAY, iso } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { newId } from '../platform/ids.js';

export const GREETING_MAX_CHARS = 5000;
export const GREETING_LOCALES = ['en', 'tr'] as const;
export type GreetingLocale = (typeof GREETING_LOCALES)[number];

/** A contact is greeted at most once in this time, whichever inbox or conversation. */
export const GREETING_INTERVAL_MS = DAY;

export async function getGreeting(ctx: Pick<Ctx, 'db'>, access: Access, inboxRef: string) {
  const inbox = await resolveInbox(ctx, access.workspaceId, inboxRef);
  const row = await ctx.db.selectFrom('inbox_greetings').selectAll().where('inbox_id', '=', inbox.id).executeTakeFirst();
  return { inboxId: inbox.id, greeting: formatGreeting(row) };
}

function checkText(text: string | undefined, locale: GreetingLocale): string | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!trimmed) throw invalid(`text.${locale} must not be empty`);
  if (trimmed.length > GREETING_MAX_CHARS) throw invalid(`text.${locale} must be at most ${GREETING_MAX_CHARS} characters`);
  return trimmed;
}

export async function setGreeting(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, inboxId: string, input: { enabled?: boolean; text?: Partial<Record<GreetingLocale, string>> }) {
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
  return formatGreeting(row);
}

const NOREPLY_LOCAL = /^(no[-_.]?reply|do[-_.]?not[-_.]?reply|no[-_.]?response|mailer[-_.]?daemon|postmaster|bounces?|majordomo|listserv|lists?)$/;

/**
 * Addresses that must never get an automatic answer: noreply-style senders and list or bounce
 * addresses (`owner-…`, `…-request`, `…-bounces`, `…-owner`); a `+tag` is ignored.
 */
export function isNoReplyAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  const local = (at < 0 ? address : address.slice(0, at)).toLowerCase().replace(/\+.*$/, '');
  if (NOREPLY_LOCAL.test(local)) return true;
  if (/no[-_.]?reply/.test(local)) return true;
  return /^owner-/.test(local) || /-(request|bounces?|owner|unsubscribe)$/.test(local);
}

/** The language of an automatic mail to a customer: the contact's `locale` attribute, else the inbox's. */
export function customerLocale(inboxLocale: string, contactAttributes: string | undefined): GreetingLocale {
  let contactLocale: unknown;
  try {
    contactLocale = contactAttributes ? (JSON.parse(contactAttributes) as Record<string, unknown>).locale : undefined;
  } catch {
    contactLocale = undefined;
  }
  for (const tag of [contactLocale, inboxLocale]) {
    if (typeof tag !== 'string') continue;
    const primary = tag.toLowerCase().split(/[-_]/)[0];
    if ((GREETING_LOCALES as readonly string[]).includes(primary)) return primary as GreetingLocale;
  }
  return 'en';
}

/** Whether the contact was greeted (by any inbox) within the interval. */
async function greetedRecently(db: Db, contactId: string, now: Date): Promise<boolean> {
  const since = iso(new Date(now.getTime() - GREETING_INTERVAL_MS));
  const row = await db.selectFrom('greetings_sent').select('message_id').where('contact_id', '=', contactId).where('sent_at', '>', since).limit(1).executeTakeFirst();
  return !!row;
}

/** The reaction to message.created: greets the first mail of a new e-mail conversation when the rules allow. */
export async function greetNewConversation(tx: Tx, event: Pick<NewEvent, 'type' | 'workspaceId' | 'data'>): Promise<void> {
  if (event.type !== 'message.created') return;
  const shown = event.data.conversation as { id?: string; source?: string; imported?: boolean } | undefined;
  const message = event.data.message as { id?: string; direction?: string; kind?: string; automatic?: boolean } | undefined;
  if (!shown?.id || shown.source !== 'email' || shown.imported) return;
  if (!message?.id || message.kind !== 'message' || message.direction !== 'in' || message.automatic) return;
  const db = tx.db;
  const conversation = await findConversation(db, event.workspaceId, shown.id);
  if (!conversation || conversation.imported === 1 || conversation.spam === 1 || !conversation.channel_id) return;
  const settings = await db.selectFrom('inbox_greetings').selectAll().where('inbox_id', '=', conversation.inbox_id).executeTakeFirst();
  if (!settings || settings.enabled !== 1) return;
  const first = await firstMessage(db, conversation.id);
  if (!first || first.id !== message.id || first.automatic === 1 || first.imported_at) return;
  const recipient = first.mail_reply_to?.toLowerCase();
  if (!recipient || isNoReplyAddress(recipient)) return;
  // Also the sender, when Reply-To names someone else: a noreply sender is automatic mail.
  const sender = (JSON.parse(first.mail_headers ?? 'null') as { from?: { address?: string } | null } | null)?.from?.address?.toLowerCase();
  if (sender && isNoReplyAddress(sender)) return;
  const team = new Set([...(await memberAddresses(db, conversation.workspace_id)), ...(await channelAddresses(db, conversation.workspace_id))]);
  if (team.has(recipient) || (sender && team.has(sender))) return;
  const now = tx.clock.now();
  if (await greetedRecently(db, conversation.contact_id, now)) return;
  if (await migrationUnderwayInto(db, conversation.inbox_id)) return;
  const channel = await db.selectFrom('channels').selectAll().where('id', '=', conversation.channel_id).executeTakeFirst();
  if (!channel || !hasSmtpAccount(channel)) return;

  const inbox = await resolveInbox({ db }, conversation.workspace_id, conversation.inbox_id);
  const contact = await loadContactView(db, conversation.workspace_id, conversation.contact_id);
  const locale = customerLocale(inbox.locale, contact?.contact.attributes);
  const body = locale === 'tr' ? settings.text_tr : settings.text_en;

  const id = newId('m', now.getTime());
  const mail = { messageId: outboundMessageId(id, channel), references: await replyReferences(db, conversation.id) };
  const headers = await replyHeaders(db, conversation, channel, { ...mail, subject: conversation.subject });
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
  await registerMailId(tx, { workspaceId: conversation.workspace_id, inboxId: conversation.inbox_id, rfcId: mail.messageId, conversationId: conversation.id, messageId: id });
  await scheduleEmailSend(tx, id);
  await db
    .insertInto('greetings_sent')
    .values({ message_id: id, workspace_id: conversation.workspace_id, inbox_id: conversation.inbox_id, contact_id: conversation.contact_id, conversation_id: conversation.id, sent_at: iso(now) })
    .execute();
}

/** Workspace deletion step: the greeting log (settings go with the inboxes). */
export async function deleteWorkspaceGreetings(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const ids = await ctx.db.selectFrom('greetings_sent').select('message_id').where('workspace_id', '=', workspaceId).limit(batch).execute();
  if (ids.length === 0) return 0;
  await ctx.db.deleteFrom('greetings_sent').where('message_id', 'in', ids.map((r) => r.message_id)).execute();
  return ids.length;
}

/** Retention: the log is only read for the last 24 hours. */
export async function deleteOldGreetingLog(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  const before = iso(new Date(now.getTime() - 2 * GREETING_INTERVAL_MS));
  const ids = await ctx.db.selectFrom('greetings_sent').select('message_id').where('sent_at', '<', before).limit(batch).execute();
  if (ids.length === 0) return 0;
  await ctx.db.deleteFrom('greetings_sent').where('message_id', 'in', ids.map((r) => r.message_id)).execute();
  return ids.length;
}
