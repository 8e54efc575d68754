// The data-lifecycle tables: what the hourly retention job deletes, and what a workspace deletion
// removes, feature by feature. Each feature appends its entries here (like the route table);
// the retention job and the workspace deletion job run them in small batches, so that no run holds
// a long write lock and a restart simply continues. The jobs are in ./retention.ts and
// ./workspace-deletion.ts.
import { broadcastRetentionRules, broadcastWorkspaceSteps } from '../broadcasts/lifecycle.js';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { workspaceContactsStep } from '../contacts/retention.js';
import { closedConversationsRule, rawEmailsRule, workspaceConversationsStep } from '../conversations/retention.js';
import { migrationAuditRule, migrationWorkspaceStep } from '../mailbox-migration/lifecycle.js';
import { migrationUploadsRule, migrationUploadsWorkspaceStep } from '../mailbox-migration/upload/service.js';
import { mailerTenantWorkspaceSteps } from '../mailer-tenants/lifecycle.js';
import { deleteWorkspaceEvents, pruneEvents } from '../events/service.js';
import { deleteOldTypingSignals } from '../typing/service.js';
import { passkeyChallengesRule } from '../people/passkeys.js';
import { expiredSessionsRule, signInCodesRule, signInLinksRule } from '../people/retention.js';
import { endedInvitesRule, workspaceInvitesStep } from '../members/retention.js';
import { deleteStaleConnections, deleteWorkspaceConnections } from '../realtime/connections.js';
import { deleteWorkspaceWebhooks, pruneDeliveries } from '../webhooks/service.js';
import { deleteWorkspaceSavedReplies } from '../saved-replies/service.js';
import { deleteExpiredContactSessions, deleteWorkspaceContactSessions } from '../widget/service.js';

export interface RetentionRule {
  /** Shown in the retention log line as the count's name, e.g. "webhook_deliveries". */
  name: string;
  /** Deletes at most `batch` rows (and their stored files) that are due at `now`; returns how many. */
  deleteBatch(ctx: Ctx, now: Date, batch: number): Promise<number>;
  /** Rows per batch (default DEFAULT_BATCH); smaller for rows that take many others with them. */
  batchSize?: number;
}

/**
 * Adds a batch's counts to the deletion's totals. A step calls it with its own transaction, so the
 * totals stay exact across a crash; a step that does not call it has its returned files counted
 * after it returns.
 */
export type DeletionTally = (trx: Db, counts: { conversations?: number; files?: number }) => Promise<void>;

/** One deleted inbox of a live workspace: what an inbox deletion removes. */
export interface InboxScope {
  workspaceId: string;
  inboxId: string;
}

export interface WorkspaceDataStep {
  name: string;
  /**
   * Deletes at most `batch` rows of a deleted workspace's data (and their stored files).
   * Returns the rows deleted (0 means this step is done) and the files removed from storage.
   */
  deleteBatch(ctx: Ctx, workspaceId: string, batch: number, tally?: DeletionTally): Promise<{ rows: number; files: number }>;
  /**
   * The same for one deleted inbox (the inbox deletion job runs the steps that have it, in this
   * table's order). Steps without it hold nothing that belongs to one inbox.
   */
  deleteInboxBatch?(ctx: Ctx, scope: InboxScope, batch: number, tally?: DeletionTally): Promise<{ rows: number; files: number }>;
  /** Rows per batch (default DEFAULT_BATCH). */
  batchSize?: number;
}

export const DEFAULT_BATCH = 500;

/** Run in this order every hour (and at start). */
export const retentionRules: RetentionRule[] = [
  closedConversationsRule,
  rawEmailsRule,
  { name: 'contact_sessions', deleteBatch: (ctx, now, batch) => deleteExpiredContactSessions(ctx, now, batch) },
  // Finished deliveries first: events that no kept delivery refers to any more can then go.
  { name: 'webhook_deliveries', deleteBatch: (ctx, _now, batch) => pruneDeliveries(ctx, batch) },
  { name: 'events', deleteBatch: async (ctx, _now, batch) => (await pruneEvents(ctx, batch)).deleted },
  { name: 'realtime_connections', deleteBatch: (ctx, _now, batch) => deleteStaleConnections(ctx, batch) },
  { name: 'typing_signals', deleteBatch: (ctx, now, batch) => deleteOldTypingSignals(ctx, now, batch) },
  expiredSessionsRule,
  signInCodesRule,
  passkeyChallengesRule,
  signInLinksRule,
  endedInvitesRule,
  ...broadcastRetentionRules,
  migrationAuditRule,
  migrationUploadsRule,
];

/**
 * Run in this order when a workspace is deleted: dependent data before what it depends on. After
 * the last step the job removes the workspace's frame (API keys, channels, inboxes, memberships;
 * the workspace row stays, marked deleted), so a step may still rely on those. An inbox deletion
 * runs the steps that have `deleteInboxBatch`, in the same order, then removes the inbox row.
 */
export const workspaceDataSteps: WorkspaceDataStep[] = [
  { name: 'contact_sessions', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceContactSessions(ctx, workspaceId, batch), files: 0 }) },
  // Deliveries are found through the events, so they go first.
  { name: 'webhooks', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceWebhooks(ctx, workspaceId, batch), files: 0 }) },
  { name: 'events', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceEvents(ctx, workspaceId, batch), files: 0 }) },
  { name: 'realtime_connections', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceConnections(ctx, workspaceId, batch), files: 0 }) },
  // Uploads are found through the migration rows, so they go first.
  migrationUploadsWorkspaceStep,
  migrationWorkspaceStep,
  workspaceConversationsStep,
  workspaceContactsStep,
  workspaceInvitesStep,
  { name: 'saved_replies', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceSavedReplies(ctx, workspaceId, batch), files: 0 }) },
  ...broadcastWorkspaceSteps,
  // Tenants at the provider go before the inboxes they belong to.
  ...mailerTenantWorkspaceSteps,
];
