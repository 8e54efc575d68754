// A send run's statements on the recipients (sender.ts runs them): claiming a batch of due ones in one
// transaction (suppressed addresses skipped, the rest taken from today's allowance), and writing a
// batch of results (statuses, counts, the day's totals, returned allowance, suppressions).
import { sql } from 'kysely';
import type { Ctx } from '../context.js';
import { iso, MINUTE } from '../platform/clock.js';
import { addDayTotals, releaseAllowance, reserveAllowance, utcDay } from './governance.js';
import type { BroadcastRow } from './store.js';

export const CLAIM_BATCH = 200;
export const RECIPIENT_RETRY_MS = [5 * MINUTE, 30 * MINUTE] as const;
export const MAX_RECIPIENT_ATTEMPTS = RECIPIENT_RETRY_MS.length + 1;

export type Outcome =
  | { ok: true; seq: number; providerId: string | null }
  | { ok: false; seq: number; level: 'recipient'; permanent: boolean; suppress: boolean; error: string }
  | { ok: false; seq: number; level: 'data'; error: string }
  | { ok: false; seq: number; level: 'sender'; permanent: boolean; throttled: boolean; error: string };

/** Where a failed send went wrong: the recipient, the message (DATA) or the sender/connection. */
export type Failure = Exclude<Outcome, { ok: true }>;

export interface Claimed {
  seq: number;
  email: string;
  /** Attempts including this one. */
  attempts: number;
  /** The UTC day whose allowance this recipient was taken from. */
  day: string;
}

interface Claim {
  recipients: Claimed[];
  /** Due recipients were left because today's allowance is used up. */
  allowanceExhausted: boolean;
  stopped: boolean;
}

/** `leftoversAfter`: claim recipients an interrupted run left `sending` (seq above it) instead of due ones. */
export async function claimBatch(ctx: Ctx, b: BroadcastRow, leftoversAfter: number | undefined): Promise<Claim> {
  return ctx.db.transaction().execute(async (trx) => {
    const tx = { ...ctx, db: trx };
    const status = await trx.selectFrom('broadcasts').select('status').where('id', '=', b.id).executeTakeFirst();
    if (status?.status !== 'sending') return { recipients: [], allowanceExhausted: false, stopped: true };
    const day = utcDay(ctx.clock.now());
    if (leftoversAfter !== undefined) {
      // An interrupted run's recipients: their allowance was taken then.
      const rows = await trx
        .selectFrom('broadcast_recipients')
        .select(['seq', 'email', 'attempts'])
        .where('broadcast_id', '=', b.id)
        .where('status', '=', 'sending')
        .where('seq', '>', leftoversAfter)
        .orderBy('seq')
        .limit(CLAIM_BATCH)
        .execute();
      return { recipients: rows.map((r) => ({ ...r, day })), allowanceExhausted: false, stopped: false };
    }
    const now = iso(ctx.clock.now());
    const rows = await trx
      .selectFrom('broadcast_recipients as r')
      .select((eb) => [
        'r.seq',
        'r.email',
        'r.attempts',
        eb
          .exists(
            eb.selectFrom('broadcast_suppressions as s').select('s.email').where('s.workspace_id', '=', b.workspace_id).whereRef('s.email', '=', 'r.email'),
          )
          .as('suppressed'),
      ])
      .where('r.broadcast_id', '=', b.id)
      .where('r.status', '=', 'pending')
      .where((eb) => eb.or([eb('r.retry_at', 'is', null), eb('r.retry_at', '<=', now)]))
      .orderBy('r.seq')
      .limit(CLAIM_BATCH)
      .execute();
    if (rows.length === 0) return { recipients: [], allowanceExhausted: false, stopped: false };
    const suppressed = rows.filter((r) => Boolean(r.suppressed)).map((r) => r.seq);
    const candidates = rows.filter((r) => !r.suppressed);
    if (suppressed.length) {
      await trx.updateTable('broadcast_recipients').set({ status: 'suppressed' }).where('broadcast_id', '=', b.id).where('seq', 'in', suppressed).execute();
    }
    let taken: typeof candidates = [];
    if (candidates.length) {
      const { granted } = await reserveAllowance(tx, b.workspace_id, candidates.length);
      taken = candidates.slice(0, granted);
      if (taken.length) {
        await trx
          .updateTable('broadcast_recipients')
          .set((eb) => ({ status: 'sending', attempts: eb('attempts', '+', 1) }))
          .where('broadcast_id', '=', b.id)
          .where(
            'seq',
            'in',
            taken.map((r) => r.seq),
          )
          .execute();
      }
    }
    if (suppressed.length) {
      await trx
        .updateTable('broadcasts')
        .set((eb) => ({ suppressed_count: eb('suppressed_count', '+', suppressed.length) }))
        .where('id', '=', b.id)
        .execute();
    }
    return {
      recipients: taken.map((r) => ({ seq: r.seq, email: r.email, attempts: r.attempts + 1, day })),
      allowanceExhausted: taken.length < candidates.length,
      stopped: false,
    };
  });
}

/** Writes a batch of results: statuses, counts, the day's totals and returned allowance. */
export async function recordResults(
  ctx: Ctx,
  b: BroadcastRow,
  results: Outcome[],
  claimedDay: Map<number, string>,
  attempts: Map<number, number>,
): Promise<void> {
  if (results.length === 0) return;
  const now = ctx.clock.now();
  const nowText = iso(now);
  const today = utcDay(now);
  const sent = results.filter((r): r is Extract<Outcome, { ok: true }> => r.ok);
  const failed: { seq: number; error: string; suppress: boolean }[] = [];
  const retried: { seq: number; error: string; retryAt: string }[] = [];
  const released: { seq: number; error: string }[] = [];
  for (const r of results) {
    if (r.ok) continue;
    if (r.level === 'data' || (r.level === 'recipient' && r.permanent))
      failed.push({ seq: r.seq, error: r.error, suppress: r.level === 'recipient' && r.suppress });
    else if (r.level === 'recipient') {
      const attempt = attempts.get(r.seq) ?? 1;
      if (attempt >= MAX_RECIPIENT_ATTEMPTS) failed.push({ seq: r.seq, error: r.error, suppress: false });
      else retried.push({ seq: r.seq, error: r.error, retryAt: iso(now.getTime() + RECIPIENT_RETRY_MS[attempt - 1]) });
    } else released.push({ seq: r.seq, error: r.error });
  }
  const emails = failed.some((f) => f.suppress)
    ? new Map(
        (
          await ctx.db
            .selectFrom('broadcast_recipients')
            .select(['seq', 'email'])
            .where('broadcast_id', '=', b.id)
            .where(
              'seq',
              'in',
              failed.filter((f) => f.suppress).map((f) => f.seq),
            )
            .execute()
        ).map((r) => [r.seq, r.email]),
      )
    : new Map<number, string>();
  await ctx.db.transaction().execute(async (trx) => {
    const plain = sent.filter((s) => !s.providerId).map((s) => s.seq);
    for (let i = 0; i < plain.length; i += 500) {
      await trx
        .updateTable('broadcast_recipients')
        .set({ status: 'sent', sent_at: nowText, error: null, retry_at: null })
        .where('broadcast_id', '=', b.id)
        .where('seq', 'in', plain.slice(i, i + 500))
        .execute();
    }
    const withId = sent.filter((s) => s.providerId);
    for (let i = 0; i < withId.length; i += 300) {
      const chunk = withId.slice(i, i + 300);
      const values = sql.join(chunk.map((s) => sql`(cast(${s.seq} as integer), cast(${s.providerId} as text))`));
      await sql`with v(seq, pid) as (values ${values})
        update broadcast_recipients set status = 'sent', sent_at = ${nowText}, error = null, retry_at = null,
          provider_message_id = (select v.pid from v where v.seq = broadcast_recipients.seq)
        where broadcast_id = ${b.id} and seq in (select v.seq from v)`.execute(trx);
    }
    for (const group of groupByError(failed)) {
      await trx
        .updateTable('broadcast_recipients')
        .set({ status: 'failed', error: group.error, retry_at: null })
        .where('broadcast_id', '=', b.id)
        .where('seq', 'in', group.seqs)
        .execute();
    }
    for (const f of failed.filter((f) => f.suppress && emails.has(f.seq))) {
      await trx
        .insertInto('broadcast_suppressions')
        .values({ workspace_id: b.workspace_id, email: emails.get(f.seq)!, reason: 'bounced', broadcast_id: b.id, created_at: nowText })
        .onConflict((oc) => oc.columns(['workspace_id', 'email']).doNothing())
        .execute();
    }
    for (const r of retried) {
      await trx
        .updateTable('broadcast_recipients')
        .set({ status: 'pending', error: r.error, retry_at: r.retryAt })
        .where('broadcast_id', '=', b.id)
        .where('seq', '=', r.seq)
        .execute();
    }
    if (released.length) {
      // Not the recipient's fault: the attempt does not count.
      await trx
        .updateTable('broadcast_recipients')
        .set((eb) => ({ status: 'pending', attempts: eb('attempts', '-', 1) }))
        .where('broadcast_id', '=', b.id)
        .where(
          'seq',
          'in',
          released.map((r) => r.seq),
        )
        .execute();
    }
    // Allowance comes back for recipients that will be tried again.
    const back = new Map<string, number>();
    for (const r of [...retried, ...released]) {
      const day = claimedDay.get(r.seq) ?? today;
      back.set(day, (back.get(day) ?? 0) + 1);
    }
    for (const [day, count] of back) await releaseAllowance(trx, b.workspace_id, day, count);
    await addDayTotals(trx, b.workspace_id, today, { sent: sent.length, failed: failed.length });
    await trx
      .updateTable('broadcasts')
      .set((eb) => ({
        sent_count: eb('sent_count', '+', sent.length),
        failed_count: eb('failed_count', '+', failed.length),
        ...(sent.length ? { sender_failures: 0 } : {}),
        updated_at: nowText,
      }))
      .where('id', '=', b.id)
      .execute();
  });
  const counted = { sent: sent.length, retried: retried.length, failed: failed.length };
  for (const [outcome, n] of Object.entries(counted)) if (n) ctx.metrics.broadcastRecipients.inc({ outcome }, n);
}

function groupByError(rows: { seq: number; error: string }[]): { error: string; seqs: number[] }[] {
  const groups = new Map<string, number[]>();
  for (const r of rows) groups.set(r.error, [...(groups.get(r.error) ?? []), r.seq]);
  return [...groups].map(([error, seqs]) => ({ error, seqs }));
}
