// A deleted workspace's mailbox readers (their settings, sealed passwords and folder positions).
import type { WorkspaceDataStep } from '../platform/lifecycle.js';
import { deleteWorkspaceReaders } from './store.js';

export const mailboxReaderWorkspaceStep: WorkspaceDataStep = {
  name: 'mailbox_readers',
  deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceReaders(ctx.db, workspaceId, batch), files: 0 }),
};
