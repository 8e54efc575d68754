// The migration part of `svc serve`: the worker job that scans, copies and syncs mailboxes.
import { iso } from '../platform/clock.js';
import type { BackgroundPart, RunningPart } from '../server/background.js';
import { MIGRATION_JOB, MigrationWorker } from './worker.js';

export interface MigrationPart extends RunningPart {
  worker: MigrationWorker;
}

export const migrationBackground: BackgroundPart = {
  name: 'mailbox-migration',
  async start(ctx) {
    const worker = new MigrationWorker(ctx);
    ctx.jobs.register(worker.job());
    // One server process runs the jobs: a lease left by a process that died (kill -9) belongs to
    // nobody now, so migrations continue at once instead of after the lease runs out.
    await ctx.db.updateTable('jobs').set({ lease_until: null, run_at: iso(ctx.clock.now()) }).where('kind', '=', MIGRATION_JOB).where('lease_until', 'is not', null).execute();
    const part: MigrationPart = { worker, stop: () => worker.stop() };
    return part;
  },
};
