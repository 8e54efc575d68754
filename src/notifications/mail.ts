// The batched notification e-mail: one `notifications.mail` job per member (unique key). It mails
// every waiting line at once from the server's own account, then stays for MAIL_EVERY_MS: lines that
// arrive meanwhile wait for that run, so a busy inbox sends a member at most one mail per interval.
// A run with nothing waiting ends the job. A line about a conversation the member no longer sees (their
// inbox limit narrowed, or they left the workspace, while it waited) is dropped, never mailed.
import type { Ctx } from '../context.js';
import { findEvents } from '../events/service.js';
import { membersSeeingInbox } from '../members/service.js';
import { findPersonById } from '../people/service.js';
import { MINUTE } from '../platform/clock.js';
import type { JobOutcome } from '../platform/jobs.js';
import { textsFor } from './text.js';

export const MAIL_EVERY_MS = 10 * MINUTE;
/** Lines in one mail; more wait for the next one. */
export const MAIL_MAX_LINES = 50;

export async function sendNotificationMail(ctx: Ctx, personId: string): Promise<JobOutcome> {
  const lines = await ctx.db
    .selectFrom('notification_mail_lines as l')
    .innerJoin('notifications as n', 'n.id', 'l.notification_id')
    .select(['l.notification_id', 'n.title', 'n.body', 'n.conversation_id', 'n.event_id', 'n.workspace_id'])
    .where('l.person_id', '=', personId)
    .orderBy('l.created_at')
    .orderBy('l.notification_id')
    .limit(MAIL_MAX_LINES)
    .execute();
  if (lines.length === 0) return;
  const ids = lines.map((l) => l.notification_id);
  const shown = await linesStillSeen(ctx, personId, lines);
  if (shown.length === 0) {
    await ctx.db.deleteFrom('notification_mail_lines').where('notification_id', 'in', ids).execute();
    // Nothing was mailed, so nothing to space out: lines beyond this batch are looked at now.
    return lines.length === MAIL_MAX_LINES ? { retryAt: ctx.clock.now() } : undefined;
  }
  const person = await findPersonById(ctx, personId);
  if (person) {
    const t = textsFor(person.locale);
    const text = [
      t.mailIntro,
      '',
      ...shown.flatMap((l) => [`- ${l.title}`, ...(l.body ? [`  ${l.body}`] : []), `  ${ctx.config.publicUrl}/conversations/${l.conversation_id}`, '']),
      t.mailFooter(`${ctx.config.publicUrl}/settings/account`),
    ].join('\n');
    const sent = await ctx.systemMail.send(
      { to: person.email, subject: t.mailSubject(shown.length), text, headers: { 'Auto-Submitted': 'auto-generated' } },
      'notifications',
    );
    // Kept for the job's retry; the mailer has logged why.
    if (!sent) throw new Error('notification mail not sent');
  }
  await ctx.db.deleteFrom('notification_mail_lines').where('notification_id', 'in', ids).execute();
  return { retryAt: new Date(ctx.clock.now().getTime() + MAIL_EVERY_MS) };
}

/** The lines whose conversation's inbox (that of the event told) the member sees now. */
async function linesStillSeen<L extends { event_id: string; workspace_id: string }>(ctx: Ctx, personId: string, lines: L[]): Promise<L[]> {
  const inboxOf = new Map((await findEvents(ctx, [...new Set(lines.map((l) => l.event_id))])).map((e) => [e.id, e.inbox_id]));
  const seeing = new Map<string, boolean>();
  const out: L[] = [];
  for (const line of lines) {
    const inboxId = inboxOf.get(line.event_id);
    if (!inboxId) continue;
    const key = `${line.workspace_id}/${inboxId}`;
    let sees = seeing.get(key);
    if (sees === undefined) {
      sees = (await membersSeeingInbox(ctx, line.workspace_id, inboxId)).some((m) => m.personId === personId);
      seeing.set(key, sees);
    }
    if (sees) out.push(line);
  }
  return out;
}
