// The data lifecycle's part of `svc serve`: the hourly retention job (due at every start) and the
// workspace and inbox deletion jobs (resumed at once after a restart of the only server).
import type { BackgroundPart } from '../platform/background.js';
import { aloneOnDatabase } from '../platform/presence.js';
import { inboxDeletionJob, resumeInboxDeletions } from './inbox-deletion.js';
import { retentionJob, runRetentionAtStart } from './retention.js';
import { resumeWorkspaceDeletions, workspaceDeletionJob } from './workspace-deletion.js';

export const lifecycleBackground: BackgroundPart = {
  name: 'lifecycle',
  jobs: (ctx) => [retentionJob(ctx), workspaceDeletionJob(ctx), inboxDeletionJob(ctx)],
  async start(ctx) {
    // Leases of a process that died are taken back only when no other server runs (they may be its own).
    const alone = await aloneOnDatabase(ctx);
    if (alone) {
      await resumeWorkspaceDeletions(ctx);
      await resumeInboxDeletions(ctx);
    }
    await runRetentionAtStart(ctx, { takeOverLease: alone });
  },
};
