// Schema migrations in the order they apply. Add new ones at the end; never edit a released one.
import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_conversations.js';
import * as m0003 from './0003_webhooks.js';
import * as m0004 from './0004_lifecycle.js';
import * as m0005 from './0005_broadcasts.js';
import * as m0006 from './0006_mailbox_migration.js';
import * as m0007 from './0007_widget.js';
import * as m0008 from './0008_mailbox_migration_sync.js';
import * as m0009 from './0009_mailer_tenants.js';
import * as m0012 from './0012_team.js';
import * as m0013 from './0013_passkeys.js';
import * as m0014 from './0014_inbox_deletion.js';
import * as m0015 from './0015_panel.js';
import * as m0016 from './0016_search.js';
import * as m0017 from './0017_mail_identity.js';
import * as m0017SavedReplies from './0017_saved_replies.js';
import * as m0018CredentialLinks from './0018_migration_credential_links.js';
import * as m0019Notifications from './0019_notifications.js';
import * as m0020 from './0020_greeting_ratings_reports.js';
import * as m0021MultiProcess from './0021_multi_process.js';
import * as m0022Helpdesk from './0022_helpdesk_sources.js';
import * as m0023MigrationUploads from './0023_migration_uploads.js';
import * as m0024CredentialsEpoch from './0024_credentials_epoch.js';
import * as m0025SignIns from './0025_migration_sign_ins.js';
import * as m0026ReactionSettingsEpoch from './0026_reaction_settings_epoch.js';
import * as m0027EpochsOnRowChanges from './0027_epochs_on_row_changes.js';
import * as m0028NotificationEventInboxes from './0028_notification_event_inboxes.js';
import * as m0029WebhookOutbox from './0029_webhook_outbox.js';
import * as m0030MigrationItemCounts from './0030_migration_item_counts.js';
import * as m0031ContactUnverifiedEmail from './0031_contact_unverified_email.js';
import * as m0032WidgetUploads from './0032_widget_uploads.js';
import * as m0033NotificationInbox from './0033_notification_inbox.js';
import * as m0034Analytics from './0034_analytics.js';
import * as m0035MessageRetryAt from './0035_message_retry_at.js';
import * as m0036Participants from './0036_participants.js';
import * as m0038Drafts from './0038_drafts.js';
import * as m0040Snooze from './0040_snooze.js';
import * as m0041BusinessHours from './0041_business_hours.js';
import * as m0043AnalyticsConversationVisits from './0043_analytics_conversation_visits.js';
import * as m0044Forwards from './0044_forwards.js';
import * as m0045ConversationMerges from './0045_conversation_merges.js';
import * as m0046Sla from './0046_sla.js';
import * as m0049Teams from './0049_teams.js';
import * as m0051SendLater from './0051_send_later.js';
import * as m0052AwayReply from './0052_away_reply.js';
import * as m0053Automation from './0053_automation.js';
import * as m0055CustomFields from './0055_custom_fields.js';
import * as m0056SavedViews from './0056_saved_views.js';
import * as m0057ContactImportsSegments from './0057_contact_imports_segments.js';
import * as m0058InboxUploads from './0058_inbox_uploads.js';
import * as m0059FormattedSavedReplies from './0059_formatted_saved_replies.js';
import * as m0061PanelScaleIndexes from './0061_panel_scale_indexes.js';
import * as m0062ChannelGrants from './0062_channel_grants.js';
import * as m0063MailboxReaders from './0063_mailbox_readers.js';
import * as m0064AnalyticsReadIndexes from './0064_analytics_read_indexes.js';
import * as m0065ListAndReportIndexes from './0065_list_and_report_indexes.js';
import * as m0066ReactionEpochMailSettings from './0066_reaction_epoch_mail_settings.js';
import * as m0067ViewCountCovering from './0067_view_count_covering.js';
import * as m0068MigrationKeepReading from './0068_migration_keep_reading.js';
import * as m0069ChannelNotifications from './0069_channel_notifications.js';
import * as m0070AnalyticsIntraday from './0070_analytics_intraday.js';
import * as m0071ContactSearch from './0071_contact_search.js';
import * as m0072ReportDayFigures from './0072_report_day_figures.js';
import * as m0073AnalyticsDayValues from './0073_analytics_day_values.js';
import * as m0074AnalyticsWriteIndexes from './0074_analytics_write_indexes.js';
import * as m0075UnreadCountsIndex from './0075_unread_counts_index.js';
import * as m0079AnalyticsValueVisitorsByVisitor from './0079_analytics_value_visitors_by_visitor.js';
import * as m0080AnalyticsVisitSums from './0080_analytics_visit_sums.js';
import * as m0081ConversationAssigneeStatistics from './0081_conversation_assignee_statistics.js';
import * as m0082ConversationLabelsActivity from './0082_conversation_labels_activity.js';
import * as m0083ConversationSpamIndex from './0083_conversation_spam_index.js';

export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_conversations': m0002,
  '0003_webhooks': m0003,
  '0004_lifecycle': m0004,
  '0005_broadcasts': m0005,
  '0006_mailbox_migration': m0006,
  '0007_widget': m0007,
  '0008_mailbox_migration_sync': m0008,
  '0009_mailer_tenants': m0009,
  '0012_team': m0012,
  '0013_passkeys': m0013,
  '0014_inbox_deletion': m0014,
  '0015_panel': m0015,
  '0016_search': m0016,
  '0017_mail_identity': m0017,
  '0017_saved_replies': m0017SavedReplies,
  '0018_migration_credential_links': m0018CredentialLinks,
  '0019_notifications': m0019Notifications,
  '0020_greeting_ratings_reports': m0020,
  '0021_multi_process': m0021MultiProcess,
  '0022_helpdesk_sources': m0022Helpdesk,
  '0023_migration_uploads': m0023MigrationUploads,
  '0024_credentials_epoch': m0024CredentialsEpoch,
  '0025_migration_sign_ins': m0025SignIns,
  '0026_reaction_settings_epoch': m0026ReactionSettingsEpoch,
  '0027_epochs_on_row_changes': m0027EpochsOnRowChanges,
  '0028_notification_event_inboxes': m0028NotificationEventInboxes,
  '0029_webhook_outbox': m0029WebhookOutbox,
  '0030_migration_item_counts': m0030MigrationItemCounts,
  '0031_contact_unverified_email': m0031ContactUnverifiedEmail,
  '0032_widget_uploads': m0032WidgetUploads,
  '0033_notification_inbox': m0033NotificationInbox,
  '0034_analytics': m0034Analytics,
  '0035_message_retry_at': m0035MessageRetryAt,
  '0036_participants': m0036Participants,
  '0038_drafts': m0038Drafts,
  '0040_snooze': m0040Snooze,
  '0041_business_hours': m0041BusinessHours,
  '0043_analytics_conversation_visits': m0043AnalyticsConversationVisits,
  '0044_forwards': m0044Forwards,
  '0045_conversation_merges': m0045ConversationMerges,
  '0046_sla': m0046Sla,
  '0049_teams': m0049Teams,
  '0051_send_later': m0051SendLater,
  '0052_away_reply': m0052AwayReply,
  '0053_automation': m0053Automation,
  '0055_custom_fields': m0055CustomFields,
  '0056_saved_views': m0056SavedViews,
  '0057_contact_imports_segments': m0057ContactImportsSegments,
  '0058_inbox_uploads': m0058InboxUploads,
  '0059_formatted_saved_replies': m0059FormattedSavedReplies,
  '0061_panel_scale_indexes': m0061PanelScaleIndexes,
  '0062_channel_grants': m0062ChannelGrants,
  '0063_mailbox_readers': m0063MailboxReaders,
  '0064_analytics_read_indexes': m0064AnalyticsReadIndexes,
  '0065_list_and_report_indexes': m0065ListAndReportIndexes,
  '0066_reaction_epoch_mail_settings': m0066ReactionEpochMailSettings,
  '0067_view_count_covering': m0067ViewCountCovering,
  '0068_migration_keep_reading': m0068MigrationKeepReading,
  '0069_channel_notifications': m0069ChannelNotifications,
  '0070_analytics_intraday': m0070AnalyticsIntraday,
  '0071_contact_search': m0071ContactSearch,
  '0072_report_day_figures': m0072ReportDayFigures,
  '0073_analytics_day_values': m0073AnalyticsDayValues,
  '0074_analytics_write_indexes': m0074AnalyticsWriteIndexes,
  '0075_unread_counts_index': m0075UnreadCountsIndex,
  '0079_analytics_value_visitors_by_visitor': m0079AnalyticsValueVisitorsByVisitor,
  '0080_analytics_visit_sums': m0080AnalyticsVisitSums,
  '0081_conversation_assignee_statistics': m0081ConversationAssigneeStatistics,
  '0082_conversation_labels_activity': m0082ConversationLabelsActivity,
  '0083_conversation_spam_index': m0083ConversationSpamIndex,
};
