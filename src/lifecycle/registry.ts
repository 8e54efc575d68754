// The data-lifecycle tables: what the hourly retention job deletes, and what a workspace deletion
// removes, feature by feature. Each feature appends its entries here (like the route table);
// the retention job and the workspace deletion job run them in small batches, so that no run holds
// a long write lock and a restart simply continues.
import { broadcastRetentionRules, broadcastWorkspaceSteps } from '../broadcasts/lifecycle.js';
import type { Ctx } from '../context.js';
import { importedMailRule, migrationAuditRule, migrationWorkspaceStep } from '../mailbox-migration/lifecycle.js';
import { migrationUploadsRule, migrationUploadsWorkspaceStep } from '../mailbox-migration/upload.js';
import { mailerTenantWorkspaceSteps } from '../mailer-tenants/lifecycle.js';
import { deleteExpiredContactSessions, deleteWorkspaceContactSessions } from '../widget/service.js';
import { deleteWorkspaceEvents, pruneEvents } from '../events/service.js';
import { deleteStaleConnections, deleteWorkspaceConnections } from '../realtime/connections.js';
import { deleteWorkspaceWebhooks, pruneDeliveries } from '../webhooks/service.js';

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
export const retentionRules: RetentionRule[] = [
  { name: 'contact_sessions', deleteBatch: (ctx, now, batch) => deleteExpiredContactSessions(ctx, now, batch) },
  // Finished deliveries first: events that no kept delivery refers to any more can then go.
  { name: 'webhook_deliveries', deleteBatch: (ctx, _now, batch) => pruneDeliveries(ctx, batch) },
  { name: 'events', deleteBatch: async (ctx, _now, batch) => (await pruneEvents(ctx, batch)).deleted },
  { name: 'realtime_connections', deleteBatch: (ctx, _now, batch) => deleteStaleConnections(ctx, batch) },
  ...broadcastRetentionRules,
  importedMailRule,
  migrationAuditRule,
  migrationUploadsRule,
];

/** Run in this order when a workspace is deleted: dependent data before what it depends on. */
export const workspaceDataSteps: WorkspaceDataStep[] = [
  { name: 'contact_sessions', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceContactSessions(ctx, workspaceId, batch), files: 0 }) },
  // Deliveries are found through the events, so they go first.
  { name: 'webhooks', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceWebhooks(ctx, workspaceId, batch), files: 0 }) },
  { name: 'events', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceEvents(ctx, workspaceId, batch), files: 0 }) },
  { name: 'realtime_connections', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceConnections(ctx, workspaceId, batch), files: 0 }) },
  // Uploads are found through the migration rows, so they go first.
  migrationUploadsWorkspaceStep,
  migrationWorkspaceStep,
  ...broadcastWorkspaceSteps,
  // Tenants at the provider go before the inboxes they belong to.
  ...mailerTenantWorkspaceSteps,
];
