// The inbox greeting: an optional automatic answer to the first mail of a new conversation, sent
// once through the inbox's e-mail channel (a message of the conversation, marked automatic, mailed
// with Auto-Submitted: auto-replied and threaded like a reply).
//
// A reaction to message.created (the first message of a conversation) stores its job inside the
// transaction that stored the mail; the job writes the greeting message and its email.send job there, so a crash loses or repeats nothing.
// Imported history records no events, so it is never greeted. Never greeted either: automatic mail
// (isAutomatic in src/mail/parse.ts), noreply-style and list addresses, the team's own addresses
// (members' and the workspace's e-mail channels'), a contact greeted in the last 24 hours, mail
// that arrives while a migration into the inbox is under way (the old mailbox is still live), and
// mail the out-of-office reply answers (./away.ts).
import type { Access } from '../auth/access.js';
import { findChannel } from '../channels/store.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { Tx } from '../conversations/service.js';
import { findConversation, firstMessage } from '../conversations/store.js';
import { deleteChosen } from '../db/bulk.js';
import { announceEvents } from '../events/service.js';
import { resolveInbox } from '../inboxes/service.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { migrationUnderwayInto } from '../mailbox-migration/store.js';
import { iso, MINUTE } from '../platform/clock.js';
import type { JobKind } from '../platform/jobs.js';
import { answeredRecently, appendAutomaticAnswer, mayAnswerAutomatically } from './automatic-answer.js';
import { awayReplyOpening } from './away-rules.js';
import { DEFAULT_GREETING, formatGreeting } from './format.js';
import { answerHeld } from './held.js';
import { GREETING_JOB, type GreetingJobPayload } from './reaction.js';
import { customerLocale, GREETING_INTERVAL_MS } from './rules.js';
import { type AnswerSettingsInput, readAnswerSettings, saveAnswerSettings } from './settings.js';

export async function getGreeting(ctx: Pick<Ctx, 'db'>, access: Access, inboxRef: string) {
  const inbox = await resolveInbox(ctx, access.workspaceId, inboxRef);
  const row = await readAnswerSettings(ctx.db, 'inbox_greetings', inbox.id);
  return { inboxId: inbox.id, greeting: formatGreeting(row, await answerHeld(ctx.db, inbox.id)) };
}

export async function setGreeting(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, inboxId: string, input: AnswerSettingsInput) {
  const row = await saveAnswerSettings(ctx, 'inbox_greetings', access.workspaceId, inboxId, input, DEFAULT_GREETING);
  return formatGreeting(row, await answerHeld(ctx.db, inboxId));
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
  const settings = await readAnswerSettings(db, 'inbox_greetings', conversation.inbox_id);
  if (!settings || settings.enabled !== 1) return false;
  if (
    await db.selectFrom('greetings_sent').select('message_id').where('conversation_id', '=', conversation.id).where('kind', '=', 'greeting').executeTakeFirst()
  )
    return false;
  const first = await firstMessage(db, conversation.id);
  if (!first || first.id !== job.messageId || !(await mayAnswerAutomatically(db, conversation, first))) return false;
  if (await answeredRecently(db, conversation.contact_id, 'greeting', tx.clock.now())) return false;
  if (await migrationUnderwayInto(db, conversation.inbox_id)) return false;
  // Outside business hours the out-of-office reply answers instead.
  if (await awayReplyOpening(db, conversation.workspace_id, conversation.inbox_id, new Date(first.created_at))) return false;
  const inbox = await resolveInbox({ db }, conversation.workspace_id, conversation.inbox_id);
  const channel = await findChannel(db, conversation.channel_id);
  if (!channel || !hasSmtpAccount(channel)) return false;

  const contact = await loadContactView(db, conversation.workspace_id, conversation.contact_id);
  const locale = customerLocale(inbox.locale, contact?.contact.attributes);
  const body = locale === 'tr' ? settings.text_tr : settings.text_en;
  await appendAutomaticAnswer(tx, { kind: 'greeting', conversation, contact, channel, body, details: { greeting: true, locale } });
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
