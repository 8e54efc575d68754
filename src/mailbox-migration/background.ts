// The migration part of `svc serve`: the worker job that scans, copies and syncs mailboxes, and the
// job that verifies and reads a completed export-file upload.
import type { Ctx } from '../context.js';
import type { BackgroundPart, RunningPart } from '../platform/background.js';
import { iso } from '../platform/clock.js';
import { databaseGauge } from '../platform/metrics.js';
import { aloneOnDatabase } from '../platform/presence.js';
import { MIGRATION_JOB, MigrationWorker } from './copy/worker.js';
import { MIGRATION_STATES } from './states.js';
import { uploadJob } from './upload/processing.js';

export interface MigrationPart extends RunningPart {
  worker: MigrationWorker;
}

export const migrationBackground: BackgroundPart = {
  name: 'mailbox-migration',
  async start(ctx) {
    observeMigrations(ctx);
    const worker = new MigrationWorker(ctx);
    ctx.jobs.register(worker.job());
    ctx.jobs.register(uploadJob(ctx));
    // A lease left by a process that died (kill -9) belongs to nobody, so migrations continue at
    // once instead of after the lease runs out; with other servers running it may be theirs.
    if (await aloneOnDatabase(ctx))
      await ctx.db
        .updateTable('jobs')
        .set({ lease_until: null, run_at: iso(ctx.clock.now()) })
        .where('kind', '=', MIGRATION_JOB)
        .where('lease_until', 'is not', null)
        .execute();
    const part: MigrationPart = { worker, stop: () => worker.stop() };
    return part;
  },
};

/**
 * svc_migrations by state, counted at scrape time. The table holds one row per migration a workspace
 * ever started (a handful each), so the count needs no index of its own.
 */
function observeMigrations(ctx: Ctx): void {
  databaseGauge(ctx.metrics, {
    name: 'svc_migrations',
    help: 'Mailbox migrations (not deleted), by state.',
    labelNames: ['state'] as const,
    read: async () => {
      const rows = await ctx.db
        .selectFrom('mailbox_migrations')
        .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
        .where('deleted_at', 'is', null)
        .groupBy('state')
        .execute();
      const byState = new Map(rows.map((r) => [r.state as string, Number(r.n)]));
      return MIGRATION_STATES.map((state) => ({ labels: { state }, value: byState.get(state) ?? 0 }));
    },
  });
}
