// The route table: every feature that answers HTTP registers here, in one list. It lives with the
// server assembly because it imports every feature; src/http stays plumbing that imports none.

import { ANALYTICS_BODY_RULES, registerAnalyticsIngestRoutes } from '../analytics/ingest-routes.js';
import { registerAnalyticsRoutes } from '../analytics/routes.js';
import { registerAnalyticsStatsRoutes } from '../analytics/stats-routes.js';
import { registerApiKeyRoutes } from '../api-keys/routes.js';
import { registerAssignmentRoutes } from '../assignment/routes.js';
import { registerMacroRoutes } from '../automation/macro-routes.js';
import { registerAutomationRoutes } from '../automation/routes.js';
import { registerBroadcastRoutes } from '../broadcasts/routes.js';
import { registerBusinessHoursRoutes } from '../business-hours/routes.js';
import { registerChannelRoutes } from '../channels/routes.js';
import { contactImportBodyLimits, registerContactCsvRoutes } from '../contacts/csv-routes.js';
import { registerContactRoutes } from '../contacts/routes.js';
import { registerSegmentRoutes } from '../contacts/segment-routes.js';
import type { Ctx } from '../context.js';
import { registerConversationExportRoutes } from '../conversations/export-routes.js';
import { registerConversationRoutes } from '../conversations/routes.js';
import { registerCustomFieldRoutes } from '../custom-fields/routes.js';
import { registerEventRoutes } from '../events/routes.js';
import { registerFeedbackRoutes } from '../feedback/routes.js';
import { registerGreetingRoutes } from '../greeting/routes.js';
import { registerHealthRoutes } from '../health/routes.js';
import { type ApiApp, createApp, type FeatureRoutes } from '../http/app.js';
import { registerInboxRoutes } from '../inboxes/routes.js';
import { ingressBodyLimits, registerMailRoutes } from '../mail/routes.js';
import { registerMigrationRoutes } from '../mailbox-migration/routes/migrations.js';
import { registerMigrationUploadRoutes, uploadBodyLimits } from '../mailbox-migration/routes/upload.js';
import { registerMcpRoutes } from '../mcp/routes.js';
import { registerMemberRoutes } from '../members/routes.js';
import { registerNotificationRoutes } from '../notifications/routes.js';
import { registerOverviewRoutes } from '../overview/routes.js';
import { registerPanelRoutes } from '../panel/routes.js';
import { registerPasskeyRoutes } from '../people/passkey-routes.js';
import { registerPeopleRoutes } from '../people/routes.js';
import { registerSessionRoutes } from '../people/session-routes.js';
import { registerPushRoutes } from '../push/routes.js';
import { registerRatingRoutes } from '../ratings/routes.js';
import { registerRealtimeRoutes } from '../realtime/routes.js';
import { registerReportRoutes } from '../reports/routes.js';
import { registerSavedReplyRoutes } from '../saved-replies/routes.js';
import { registerSearchRoutes } from '../search/routes.js';
import { registerSlaRoutes } from '../sla/routes.js';
import { registerTeamRoutes } from '../teams/routes.js';
import { registerTypingRoutes } from '../typing/routes.js';
import { registerViewRoutes } from '../views/routes.js';
import { registerWebhookRoutes } from '../webhooks/routes.js';
import { registerWidgetRoutes } from '../widget/routes.js';
import { registerWidgetScriptRoutes } from '../widget-script/routes.js';
import { registerWorkspaceRoutes } from '../workspaces/routes.js';
import { mailHandlers } from './mail-handlers.js';

export const routeTable: FeatureRoutes[] = [
  { register: registerHealthRoutes },
  { register: registerPeopleRoutes },
  { register: registerPasskeyRoutes },
  { register: registerSessionRoutes },
  { register: registerMemberRoutes },
  { register: registerWorkspaceRoutes },
  { register: registerApiKeyRoutes },
  { register: registerInboxRoutes },
  { register: registerChannelRoutes },
  // Before the conversation and contact routes: export.csv is not an id.
  { register: registerConversationExportRoutes },
  {
    register: registerConversationRoutes,
    bodyLimits: [{ method: 'POST', path: /^\/v1\/conversations\/[^/]+\/attachments$/, maxBytes: (ctx) => ctx.config.attachmentMaxBytes }],
  },
  { register: registerContactCsvRoutes, bodyLimits: contactImportBodyLimits },
  { register: registerContactRoutes },
  { register: registerCustomFieldRoutes },
  { register: registerSegmentRoutes },
  { register: registerSearchRoutes },
  { register: registerOverviewRoutes },
  { register: registerSavedReplyRoutes },
  { register: registerGreetingRoutes },
  { register: registerBusinessHoursRoutes },
  { register: registerTeamRoutes },
  { register: registerViewRoutes },
  { register: registerAssignmentRoutes },
  { register: registerAutomationRoutes },
  { register: registerMacroRoutes },
  { register: registerSlaRoutes },
  { register: registerRatingRoutes },
  { register: registerReportRoutes },
  { register: registerFeedbackRoutes },
  { register: (app, ctx) => registerMailRoutes(app, ctx, mailHandlers), bodyLimits: ingressBodyLimits },
  { register: registerWebhookRoutes },
  { register: registerEventRoutes },
  { register: registerRealtimeRoutes },
  { register: registerPushRoutes },
  { register: registerNotificationRoutes },
  {
    register: registerWidgetRoutes,
    bodyLimits: [{ method: 'POST', path: /^\/v1\/widget\/conversations\/[^/]+\/attachments$/, maxBytes: (ctx) => ctx.config.attachmentMaxBytes }],
  },
  { register: registerWidgetScriptRoutes },
  { register: registerTypingRoutes },
  { register: registerBroadcastRoutes },
  { register: registerMigrationRoutes },
  { register: registerMigrationUploadRoutes, bodyLimits: uploadBodyLimits },
  { register: registerMcpRoutes },
  { register: registerAnalyticsRoutes },
  { register: registerAnalyticsStatsRoutes },
  { register: registerAnalyticsIngestRoutes, bodyLimits: ANALYTICS_BODY_RULES },
  // Last: its fallback answers every GET no route above took.
  { register: registerPanelRoutes },
];

/** The HTTP application with every feature's routes: what `svc serve` listens with. */
export function createServerApp(ctx: Ctx): ApiApp {
  return createApp(ctx, routeTable);
}
