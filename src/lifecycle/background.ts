// The data lifecycle's part of `svc serve`: the hourly retention job (due at every start) and the
// workspace and inbox deletion jobs (resumed at once after a restart).
import type { BackgroundPart } from '../platform/background.js';
import { inboxDeletionJob, resumeInboxDeletions } from './inbox-deletion.js';
import { retentionJob, runRetentionAtStart } from './retention.js';
import { resumeWorkspaceDeletions, workspaceDeletionJob } from './workspace-deletion.js';

export const lifecycleBackground: BackgroundPart = {
  name: 'lifecycle',
  jobs: (ctx) => [retentionJob(ctx), workspaceDeletionJob(ctx), inboxDeletionJob(ctx)],
  async start(ctx) {
    await resumeWorkspaceDeletions(ctx);
    await resumeInboxDeletions(ctx);
    await runRetentionAtStart(ctx);
  },
};
