// The data-lifecycle tables: what the hourly retention job deletes, and what a workspace deletion
// removes, feature by feature. Each feature appends its entries here (like the route table);
// the retention job and the workspace deletion job run them in small batches, so that no run holds
// a long write lock and a restart simply continues.
import type { Ctx } from '../context.js';
import { importedMailRule, migrationAuditRule, migrationWorkspaceStep } from '../mailbox-migration/lifecycle.js';
import { migrationUploadsRule, migrationUploadsWorkspaceStep } from '../mailbox-migration/upload.js';

export interface RetentionRule {
  /** Shown in the retention log line as the count's name, e.g. "webhook_deliveries". */
  name: string;
  /** Deletes at most `batch` rows (and their stored files) that are due at `now`; returns how many. */
  deleteBatch(ctx: Ctx, now: Date, batch: number): Promise<number>;
}

export interface WorkspaceDataStep {
  name: string;
  /**
   * Deletes at most `batch` rows of a deleted workspace's data (and their stored files).
   * Returns the rows deleted (0 means this step is done) and the files removed from storage.
   */
  deleteBatch(ctx: Ctx, workspaceId: string, batch: number): Promise<{ rows: number; files: number }>;
}

/** Run in this order every hour (and at start). */
export const retentionRules: RetentionRule[] = [importedMailRule, migrationAuditRule, migrationUploadsRule];

/** Run in this order when a workspace is deleted: dependent data before what it depends on. */
// Uploads are found through the migration rows, so they go first.
export const workspaceDataSteps: WorkspaceDataStep[] = [migrationUploadsWorkspaceStep, migrationWorkspaceStep];
