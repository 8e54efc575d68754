// The out-of-office reply (issue 35): an optional automatic answer to a customer's mail that
// arrives while the inbox is closed by its business hours, saying when the team answers again.
// Like the greeting: e-mail only, through the inbox's channel, marked automatic, threaded, at most
// once per contact in 24 hours, never to automatic mail, noreply/list or team addresses, imported
// history or while a migration into the inbox is under way. Outside hours it answers instead of the
// greeting. The reaction stores an `away_reply.send` job in the transaction that recorded the mail;
// the job checks every rule again and writes the answer with its email.send job.
import { inboxHours } from '../business-hours/service.js';
import { findChannel } from '../channels/store.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { Tx } from '../conversations/service.js';
import { findConversation, messageById } from '../conversations/store.js';
import type { Db } from '../db/schema.js';
import { announceEvents } from '../events/service.js';
import type { InboxRow } from '../inboxes/store.js';
import { hasSmtpAccount } from '../mail/transport.js';
import { migrationUnderwayInto } from '../mailbox-migration/store.js';
import { MINUTE } from '../platform/clock.js';
import type { JobKind } from '../platform/jobs.js';
import { answeredRecently, appendAutomaticAnswer, mayAnswerAutomatically } from './automatic-answer.js';
import { AWAY_JOB, type AwayJobPayload, awayReplyOpening, formatOpening } from './away-rules.js';
import { type AwayHeld, DEFAULT_AWAY, formatAwayReply, NEXT_OPENING } from './format.js';
import { answerHeld } from './held.js';
import { customerLocale } from './rules.js';
import { type AnswerSettingsInput, readAnswerSettings, saveAnswerSettings } from './settings.js';

/** Why no away reply would go out from this inbox now, whatever the mail. */
async function awayHeld(db: Db, inbox: InboxRow): Promise<AwayHeld | null> {
  if (!(await inboxHours(db, inbox)).weekly) return 'no_schedule';
  return answerHeld(db, inbox.id);
}

export async function getAwayReply(ctx: Pick<Ctx, 'db'>, inbox: InboxRow) {
  return formatAwayReply(await readAnswerSettings(ctx.db, 'inbox_away_replies', inbox.id), await awayHeld(ctx.db, inbox));
}

export async function setAwayReply(ctx: Pick<Ctx, 'db' | 'clock'>, inbox: InboxRow, input: AnswerSettingsInput) {
  const row = await saveAnswerSettings(ctx, 'inbox_away_replies', inbox.workspace_id, inbox.id, input, DEFAULT_AWAY);
  return formatAwayReply(row, await awayHeld(ctx.db, inbox));
}

async function answerInTransaction(tx: Tx, job: AwayJobPayload): Promise<boolean> {
  const db = tx.db;
  const message = await messageById(db, job.messageId);
  // A merge may have moved the mail: the conversation it is in now.
  const conversation = message && (await findConversation(db, job.workspaceId, message.conversation_id));
  if (!message || !conversation || conversation.imported === 1 || conversation.spam === 1 || !conversation.channel_id || conversation.source !== 'email')
    return false;
  if (!(await mayAnswerAutomatically(db, conversation, message))) return false;
  const away = await awayReplyOpening(db, conversation.workspace_id, conversation.inbox_id, new Date(message.created_at));
  if (!away) return false;
  if (await answeredRecently(db, conversation.contact_id, 'away', tx.clock.now())) return false;
  if (await migrationUnderwayInto(db, conversation.inbox_id)) return false;
  const channel = await findChannel(db, conversation.channel_id);
  if (!channel || !hasSmtpAccount(channel)) return false;
  const settings = await readAnswerSettings(db, 'inbox_away_replies', conversation.inbox_id);
  if (!settings) return false;

  const contact = await loadContactView(db, conversation.workspace_id, conversation.contact_id);
  const locale = customerLocale(away.inbox.locale, contact?.contact.attributes);
  const text = locale === 'tr' ? settings.text_tr : settings.text_en;
  const body = text.replaceAll(NEXT_OPENING, formatOpening(away.opening, away.timezone, locale));
  const details = { away_reply: true, locale, next_opening: away.opening.toISOString() };
  await appendAutomaticAnswer(tx, { kind: 'away', conversation, contact, channel, body, details });
  return true;
}

/** The `away_reply.send` job: answers one customer mail when every rule allows. */
export async function sendAwayReply(ctx: Pick<Ctx, 'db' | 'clock' | 'hub' | 'jobs'>, job: AwayJobPayload): Promise<boolean> {
  const sent = await ctx.db.transaction().execute((trx) => answerInTransaction({ db: trx, clock: ctx.clock }, job));
  if (sent) {
    announceEvents(ctx);
    ctx.jobs.wake();
  }
  return sent;
}

export function awayReplyJob(ctx: Ctx): JobKind<AwayJobPayload> {
  return { kind: AWAY_JOB, leaseMs: MINUTE, run: async (payload) => void (await sendAwayReply(ctx, payload)) };
}
