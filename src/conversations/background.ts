// The conversations feature's jobs: removing stored files of deleted conversations, and uploads
// that were never sent.
import type { BackgroundPart } from '../platform/background.js';
import { attachmentCleanupJob } from './attachments.js';
import { filesDeleteJob } from './files.js';
import { sendLaterJob } from './send-later.js';

export const conversationsBackground: BackgroundPart = {
  name: 'conversations',
  jobs: (ctx) => [filesDeleteJob(ctx), attachmentCleanupJob(ctx), sendLaterJob(ctx)],
};
