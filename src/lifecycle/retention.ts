// The hourly clean-up (also run at start): every retention rule in small batches, then one log line
// with the counts by rule name. Lost workspace deletions are queued again first.
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import type { Ctx } from '../context.js';
import { HOUR, MINUTE } from '../platform/clock.js';
import { enqueue, type JobKind, type JobOutcome } from '../platform/jobs.js';
import { requeueInboxDeletions } from './inbox-deletion.js';
import { DEFAULT_BATCH, type RetentionRule, retentionRules } from './registry.js';
import { requeueWorkspaceDeletions } from './workspace-deletion.js';

export const RETENTION_JOB = 'lifecycle.retention';
export const RETENTION_EVERY_MS = HOUR;
/** A run stops after this long (a large backlog continues a minute later rather than holding the job). */
export const RETENTION_RUN_BUDGET_MS = 10 * MINUTE;

export interface RetentionReport {
  deleted: Record<string, number>;
  workspace_deletions_queued: number;
  inbox_deletions_queued: number;
  /** The budget ran out before every rule was done; the job runs again in a minute. */
  more: boolean;
}

export async function runRetention(ctx: Ctx, rules: readonly RetentionRule[] = retentionRules, budgetMs = RETENTION_RUN_BUDGET_MS): Promise<RetentionReport> {
  const now = ctx.clock.now();
  const started = performance.now();
  const queued = await requeueWorkspaceDeletions(ctx);
  const inboxesQueued = await requeueInboxDeletions(ctx);
  const deleted: Record<string, number> = {};
  let more = false;
  for (const rule of rules) {
    deleted[rule.name] = 0;
    if (more) continue;
    const batch = rule.batchSize ?? DEFAULT_BATCH;
    for (;;) {
      const n = await rule.deleteBatch(ctx, now, batch);
      deleted[rule.name] += n;
      if (n === 0 || (rule.shortBatchIsLast && n < batch)) break;
      if (performance.now() - started > budgetMs) {
        more = true;
        break;
      }
      // Between batches: requests and other jobs get their turn (no long write lock, no long stall).
      await yieldToOthers();
    }
  }
  ctx.log.info('retention', {
    deleted,
    workspace_deletions_queued: queued,
    inbox_deletions_queued: inboxesQueued,
    more,
    duration_ms: Math.round(performance.now() - started),
  });
  // Files of deleted rows go through their own jobs: run them now rather than at the next poll.
  ctx.jobs.wake();
  return { deleted, workspace_deletions_queued: queued, inbox_deletions_queued: inboxesQueued, more };
}

export function retentionJob(ctx: Ctx): JobKind {
  return {
    kind: RETENTION_JOB,
    everyMs: RETENTION_EVERY_MS,
    leaseMs: RETENTION_RUN_BUDGET_MS + 10 * MINUTE,
    async run(): Promise<JobOutcome> {
      const report = await runRetention(ctx);
      if (report.more) return { retryAt: new Date(ctx.clock.now().getTime() + MINUTE) };
    },
  };
}

/**
 * The periodic row exists and is due now: the clean-up runs at every start. A run under another
 * server's lease is not started twice (it runs again once that run ends); `takeOverLease` (no other
 * server runs, so a lease is a dead process's) makes it due at once instead.
 */
export async function runRetentionAtStart(ctx: Pick<Ctx, 'db' | 'clock'>, opts: { takeOverLease: boolean } = { takeOverLease: true }): Promise<void> {
  const uniqueKey = `periodic:${RETENTION_JOB}`;
  await enqueue(ctx.db, ctx.clock, { kind: RETENTION_JOB, uniqueKey, sooner: true });
  if (!opts.takeOverLease) return;
  await ctx.db
    .updateTable('jobs')
    .set({ run_at: new Date(ctx.clock.now()).toISOString(), lease_until: null })
    .where('unique_key', '=', uniqueKey)
    .execute();
}
