// The data-lifecycle tables: what the hourly retention job deletes, and what a workspace deletion
// removes, feature by feature. Each feature appends its entries here (like the route table);
// the retention job and the workspace deletion job run them in small batches, so that no run holds
// a long write lock and a restart simply continues. The jobs are in ./retention.ts and
// ./workspace-deletion.ts; the entry types are in src/platform/lifecycle.ts.
import { analyticsRetentionRules, analyticsWorkspaceStep } from '../analytics/lifecycle.js';
import { deleteWorkspaceRules } from '../automation/rules.js';
import { deleteOldRuns } from '../automation/runs.js';
import { broadcastRetentionRules, broadcastWorkspaceSteps } from '../broadcasts/lifecycle.js';
import { contactImportsRule, workspaceContactImportsStep } from '../contacts/import-lifecycle.js';
import { workspaceContactsStep } from '../contacts/retention.js';
import { inboxUploadsWorkspaceStep } from '../conversations/inbox-uploads.js';
import { closedConversationsRule, rawEmailsRule, workspaceConversationsStep } from '../conversations/retention.js';
import { deleteWorkspaceCustomFields } from '../custom-fields/service.js';
import { deleteWorkspaceEvents, pruneEvents } from '../events/service.js';
import { deleteOldGreetingLog, deleteWorkspaceGreetings } from '../greeting/service.js';
import { channelGrantsWorkspaceStep, channelSignInsRule } from '../mail-accounts/lifecycle.js';
import { credentialLinksRule, migrationAuditRule, migrationWorkspaceStep } from '../mailbox-migration/lifecycle.js';
import { migrationUploadsRule, migrationUploadsWorkspaceStep } from '../mailbox-migration/upload/service.js';
import { mailboxReaderWorkspaceStep } from '../mailbox-reader/lifecycle.js';
import { mailerTenantWorkspaceSteps } from '../mailer-tenants/lifecycle.js';
import { endedInvitesRule, workspaceInvitesStep } from '../members/retention.js';
import { deleteOldNotifications, deleteWorkspaceNotifications } from '../notifications/service.js';
import { passkeyChallengesRule } from '../people/passkeys.js';
import { expiredSessionsRule, signInCodesRule, signInLinksRule } from '../people/retention.js';
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';
import { deleteEndedRateWindows } from '../platform/rate-limit.js';
import { deleteWorkspaceRatingRequests } from '../ratings/service.js';
import { deleteStaleConnections, deleteWorkspaceConnections } from '../realtime/connections.js';
import { deleteWorkspaceReportTotals } from '../reports/service.js';
import { deleteWorkspaceSavedReplies } from '../saved-replies/service.js';
import { deleteOldTypingSignals } from '../typing/service.js';
import { deleteOldViewingSignals } from '../typing/viewing.js';
import { deleteWorkspaceViews } from '../views/service.js';
import { deleteWorkspaceWebhooks, pruneDeliveries } from '../webhooks/service.js';
import { deleteExpiredContactSessions, deleteWorkspaceContactSessions } from '../widget/service.js';

export { DEFAULT_BATCH, type DeletionTally, type RetentionRule, type WorkspaceDataStep } from '../platform/lifecycle.js';

/** Run in this order every hour (and at start). */
export const retentionRules: RetentionRule[] = [
  closedConversationsRule,
  rawEmailsRule,
  { name: 'contact_sessions', deleteBatch: (ctx, now, batch) => deleteExpiredContactSessions(ctx, now, batch) },
  // Finished deliveries first: events that no kept delivery refers to any more can then go.
  { name: 'webhook_deliveries', deleteBatch: (ctx, _now, batch) => pruneDeliveries(ctx, batch) },
  { name: 'events', deleteBatch: async (ctx, _now, batch) => (await pruneEvents(ctx, batch)).deleted },
  { name: 'realtime_connections', deleteBatch: (ctx, _now, batch) => deleteStaleConnections(ctx, batch) },
  { name: 'rate_limits', deleteBatch: (ctx, now, batch) => deleteEndedRateWindows(ctx.db, now, batch) },
  { name: 'typing_signals', deleteBatch: (ctx, now, batch) => deleteOldTypingSignals(ctx, now, batch) },
  { name: 'notifications', deleteBatch: (ctx, now, batch) => deleteOldNotifications(ctx, now, batch) },
  { name: 'viewing_signals', deleteBatch: (ctx, now, batch) => deleteOldViewingSignals(ctx, now, batch) },
  expiredSessionsRule,
  signInCodesRule,
  passkeyChallengesRule,
  signInLinksRule,
  endedInvitesRule,
  ...broadcastRetentionRules,
  migrationAuditRule,
  migrationUploadsRule,
  credentialLinksRule,
  channelSignInsRule,
  { name: 'greetings_sent', deleteBatch: (ctx, now, batch) => deleteOldGreetingLog(ctx, now, batch) },
  ...analyticsRetentionRules,
  { name: 'automation_runs', deleteBatch: (ctx, now, batch) => deleteOldRuns(ctx, now, batch) },
  contactImportsRule,
];

/**
 * Run in this order when a workspace is deleted: dependent data before what it depends on. After
 * the last step the job removes the workspace's frame (API keys, channels, inboxes, memberships;
 * the workspace row stays, marked deleted), so a step may still rely on those. An inbox deletion
 * runs the steps that have `deleteInboxBatch`, in the same order, then removes the inbox row.
 */
export const workspaceDataSteps: WorkspaceDataStep[] = [
  {
    name: 'contact_sessions',
    deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceContactSessions(ctx, workspaceId, batch), files: 0 }),
  },
  // Sealed tokens first: a deleted workspace sends and reads nothing more.
  channelGrantsWorkspaceStep,
  // Deliveries are found through the events, so they go first.
  { name: 'webhooks', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceWebhooks(ctx, workspaceId, batch), files: 0 }) },
  { name: 'events', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceEvents(ctx, workspaceId, batch), files: 0 }) },
  { name: 'notifications', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceNotifications(ctx, workspaceId, batch), files: 0 }) },
  {
    name: 'realtime_connections',
    deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceConnections(ctx, workspaceId, batch), files: 0 }),
  },
  // Uploads are found through the migration rows, so they go first.
  migrationUploadsWorkspaceStep,
  migrationWorkspaceStep,
  mailboxReaderWorkspaceStep,
  workspaceConversationsStep,
  inboxUploadsWorkspaceStep,
  workspaceContactImportsStep,
  workspaceContactsStep,
  // After conversations and contacts (which take their values with them): what is left, then the fields.
  {
    name: 'custom_fields',
    deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceCustomFields(ctx, workspaceId, batch), files: 0 }),
  },
  workspaceInvitesStep,
  { name: 'greetings_sent', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceGreetings(ctx, workspaceId, batch), files: 0 }) },
  {
    name: 'rating_requests',
    deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceRatingRequests(ctx, workspaceId, batch), files: 0 }),
  },
  { name: 'report_totals', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceReportTotals(ctx, workspaceId, batch), files: 0 }) },
  { name: 'saved_replies', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceSavedReplies(ctx, workspaceId, batch), files: 0 }) },
  { name: 'automation', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceRules(ctx, workspaceId, batch), files: 0 }) },
  { name: 'saved_views', deleteBatch: async (ctx, workspaceId, batch) => ({ rows: await deleteWorkspaceViews(ctx, workspaceId, batch), files: 0 }) },
  ...broadcastWorkspaceSteps,
  analyticsWorkspaceStep,
  // Tenants at the provider go before the inboxes they belong to.
  ...mailerTenantWorkspaceSteps,
];
