// The operator digest: lines about workspaces and tenants that need the operator's eye, mailed to
// SVC_OPERATOR_EMAIL through the server's own SMTP account, at most one e-mail every 5 minutes.
// A line is a row first; the `operator.digest` job batches whatever is waiting into one e-mail.
// Lines never hold mail content or recipient addresses.
import type { Ctx } from '../context.js';
import { deleteChosen } from '../db/bulk.js';
import type { DigestLineKind } from '../db/schema.js';
import { iso, MINUTE } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { enqueue, type JobKind } from '../platform/jobs.js';

export const DIGEST_JOB = 'operator.digest';
export const DIGEST_INTERVAL_MS = 5 * MINUTE;
const LAST_SENT_KEY = 'operator_digest_last_sent_at';
const MAX_LINES_PER_MAIL = 500;
/** Sent lines are kept this long (then the retention job deletes them). */
export const SENT_LINES_KEEP_MS = 30 * 24 * 60 * MINUTE;

/** Headings in the order the spec lists the line kinds. */
export const DIGEST_HEADINGS: Record<DigestLineKind, string> = {
  approval_requested: 'Broadcast approval requested',
  workspace_suspended: 'Workspace suspended from broadcasts',
  broadcast_paused: 'Broadcast paused',
  tenant_paused: 'Tenant paused',
  analytics_limit: 'Analytics monthly limit',
};

type C = Pick<Ctx, 'db' | 'clock' | 'config' | 'log'>;

async function lastSentAt(ctx: Pick<Ctx, 'db'>): Promise<number | undefined> {
  const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', LAST_SENT_KEY).executeTakeFirst();
  return row ? new Date(row.value).getTime() : undefined;
}

/** Stores a line and makes sure a digest job is due (now, or 5 minutes after the last digest). */
export async function addDigestLine(ctx: C, line: { kind: DigestLineKind; workspaceId?: string | null; text: string }): Promise<void> {
  if (!ctx.config.broadcasts.operatorEmail) {
    ctx.log.warn('operator digest line not sent', { kind: line.kind, workspace_id: line.workspaceId ?? null, reason: 'SVC_OPERATOR_EMAIL is not set' });
    return;
  }
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('operator_digest_lines')
    .values({
      id: newId('dig', now.getTime()),
      kind: line.kind,
      workspace_id: line.workspaceId ?? null,
      text: line.text.replace(/\s+/g, ' ').trim(),
      created_at: iso(now),
      sent_at: null,
    })
    .execute();
  const last = await lastSentAt(ctx);
  const runAt = new Date(Math.max(now.getTime(), (last ?? 0) + DIGEST_INTERVAL_MS));
  await enqueue(ctx.db, ctx.clock, { kind: DIGEST_JOB, runAt, uniqueKey: DIGEST_JOB });
}

export function composeDigest(lines: { kind: DigestLineKind; text: string }[], when: Date, serverUrl: string): { subject: string; text: string } {
  const parts: string[] = [`svc operator digest for ${serverUrl}, ${iso(when)}`, ''];
  for (const kind of Object.keys(DIGEST_HEADINGS) as DigestLineKind[]) {
    const of = lines.filter((l) => l.kind === kind);
    if (!of.length) continue;
    parts.push(`${DIGEST_HEADINGS[kind]} (${of.length})`);
    for (const l of of) parts.push(`- ${l.text}`);
    parts.push('');
  }
  return { subject: `svc operator digest: ${lines.length} ${lines.length === 1 ? 'item' : 'items'}`, text: parts.join('\n') };
}

export function digestJob(ctx: Ctx): JobKind {
  return {
    kind: DIGEST_JOB,
    leaseMs: 2 * MINUTE,
    async run() {
      const now = ctx.clock.now();
      const last = await lastSentAt(ctx);
      if (last !== undefined && now.getTime() < last + DIGEST_INTERVAL_MS) return { retryAt: new Date(last + DIGEST_INTERVAL_MS) };
      const lines = await ctx.db
        .selectFrom('operator_digest_lines')
        .select(['id', 'kind', 'text'])
        .where('sent_at', 'is', null)
        .orderBy('created_at')
        .orderBy('id')
        .limit(MAX_LINES_PER_MAIL)
        .execute();
      if (lines.length === 0) return;
      const to = ctx.config.broadcasts.operatorEmail;
      if (!to) {
        // The setting was removed since the lines were stored: they are dropped.
        await ctx.db.deleteFrom('operator_digest_lines').where('sent_at', 'is', null).execute();
        ctx.log.warn('operator digest not sent', { lines: lines.length, reason: 'SVC_OPERATOR_EMAIL is not set' });
        return;
      }
      const mail = composeDigest(lines, now, ctx.config.publicUrl);
      const sent = await ctx.systemMail.send({ to, ...mail }, 'operator digest');
      if (!sent) return { retryAt: new Date(now.getTime() + DIGEST_INTERVAL_MS) };
      const sentAt = iso(ctx.clock.now());
      await ctx.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('operator_digest_lines')
          .set({ sent_at: sentAt })
          .where(
            'id',
            'in',
            lines.map((l) => l.id),
          )
          .execute();
        await trx
          .insertInto('server_meta')
          .values({ key: LAST_SENT_KEY, value: sentAt })
          .onConflict((oc) => oc.column('key').doUpdateSet({ value: sentAt }))
          .execute();
      });
      ctx.log.info('operator digest sent', { lines: lines.length });
      const more = await ctx.db.selectFrom('operator_digest_lines').select('id').where('sent_at', 'is', null).limit(1).executeTakeFirst();
      if (more) return { retryAt: new Date(new Date(sentAt).getTime() + DIGEST_INTERVAL_MS) };
    },
  };
}

/** Retention: sent lines older than 30 days. */
export async function deleteSentDigestLines(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  const cutoff = iso(now.getTime() - SENT_LINES_KEEP_MS);
  const sent = ctx.db.selectFrom('operator_digest_lines').select('id').where('sent_at', 'is not', null).where('sent_at', '<', cutoff);
  return deleteChosen(ctx.db, 'operator_digest_lines', 'id', sent, batch);
}
