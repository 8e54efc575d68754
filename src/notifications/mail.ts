// The batched notification e-mail: one `notifications.mail` job per member (unique key). It mails
// every waiting line at once from the server's own account, then stays for MAIL_EVERY_MS: lines that
// arrive meanwhile wait for that run, so a busy inbox sends a member at most one mail per interval.
// A run with nothing waiting ends the job. A line about a conversation the member no longer sees (their
// inbox limit narrowed, they left the workspace, or the conversation moved, while it waited) is
// dropped, never mailed (notificationsSeenNow, the rule the push job follows too).

import type { Ctx } from '../context.js';
import { findPersonById } from '../people/service.js';
import { MINUTE } from '../platform/clock.js';
import { oneLine } from '../platform/foreign-text.js';
import type { JobOutcome } from '../platform/jobs.js';
import { notificationsSeenNow, notificationUrl } from './service.js';
import { textsFor } from './text.js';

export const MAIL_EVERY_MS = 10 * MINUTE;
/** Lines in one mail; more wait for the next one. */
export const MAIL_MAX_LINES = 50;

export async function sendNotificationMail(ctx: Ctx, personId: string): Promise<JobOutcome> {
  const lines = await ctx.db
    .selectFrom('notification_mail_lines as l')
    .innerJoin('notifications as n', 'n.id', 'l.notification_id')
    .select(['l.notification_id', 'n.title', 'n.body', 'n.conversation_id', 'n.channel_id', 'n.workspace_id'])
    .where('l.person_id', '=', personId)
    .orderBy('l.created_at')
    .orderBy('l.notification_id')
    .limit(MAIL_MAX_LINES)
    .execute();
  if (lines.length === 0) return;
  const ids = lines.map((l) => l.notification_id);
  const shown = await notificationsSeenNow(ctx, personId, lines);
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
      // Titles and previews carry a stranger's words (subject, name, message): one line each, the
      // preview quoted, so nothing in them reads as a line of this mail.
      ...shown.flatMap((l) => [`- ${oneLine(l.title)}`, ...(l.body ? [`  > ${oneLine(l.body)}`] : []), `  ${notificationUrl(ctx.config.publicUrl, l)}`, '']),
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
