// The one place that says which tables exist. Each feature's table types live in ./tables/.
import type { Kysely, Transaction } from 'kysely';
import type { AnalyticsTables } from './tables/analytics.js';
import type { AssignmentTables } from './tables/assignment.js';
import type { AuthTables } from './tables/auth.js';
import type { AutomationTables } from './tables/automation.js';
import type { BroadcastTables } from './tables/broadcasts.js';
import type { BusinessHoursTables } from './tables/business-hours.js';
import type { ContactTables } from './tables/contacts.js';
import type { ConversationMoveTables } from './tables/conversation-moves.js';
import type { ConversationTables } from './tables/conversations.js';
import type { CoreTables } from './tables/core.js';
import type { CustomFieldsTables } from './tables/custom-fields.js';
import type { EventTables } from './tables/events.js';
import type { GreetingTables } from './tables/greeting.js';
import type { LifecycleTables } from './tables/lifecycle.js';
import type { MailAccountTables } from './tables/mail-accounts.js';
import type { MailboxMigrationTables } from './tables/mailbox-migration.js';
import type { MailboxReaderTables } from './tables/mailbox-reader.js';
import type { MailerTenantTables } from './tables/mailer-tenants.js';
import type { NotificationTables } from './tables/notifications.js';
import type { PeopleTables } from './tables/people.js';
import type { RatingTables } from './tables/ratings.js';
import type { RealtimeTables } from './tables/realtime.js';
import type { ReportTables } from './tables/reports.js';
import type { SavedReplyTables } from './tables/saved-replies.js';
import type { SlaTables } from './tables/sla.js';
import type { TeamTables } from './tables/team.js';
import type { TeamsTables } from './tables/teams.js';
import type { ViewTables } from './tables/views.js';
import type { WebhookTables } from './tables/webhooks.js';
import type { WidgetTables } from './tables/widget.js';

export interface Database
  extends CoreTables,
    ConversationTables,
    ContactTables,
    ConversationMoveTables,
    WebhookTables,
    RealtimeTables,
    WidgetTables,
    BroadcastTables,
    PeopleTables,
    LifecycleTables,
    MailAccountTables,
    MailerTenantTables,
    MailboxMigrationTables,
    MailboxReaderTables,
    TeamTables,
    SavedReplyTables,
    NotificationTables,
    GreetingTables,
    BusinessHoursTables,
    SlaTables,
    RatingTables,
    ReportTables,
    AuthTables,
    EventTables,
    AnalyticsTables,
    TeamsTables,
    AssignmentTables,
    CustomFieldsTables,
    AutomationTables,
    ViewTables {}

/** A connection or an open transaction: store functions accept either. */
export type Db = Kysely<Database> | Transaction<Database>;

export type * from './tables/analytics.js';
export type * from './tables/assignment.js';
export type * from './tables/auth.js';
export type * from './tables/automation.js';
export type * from './tables/broadcasts.js';
export type * from './tables/business-hours.js';
export type * from './tables/contacts.js';
export type * from './tables/conversation-moves.js';
export type * from './tables/conversations.js';
export type * from './tables/core.js';
export type * from './tables/custom-fields.js';
export type * from './tables/greeting.js';
export type * from './tables/lifecycle.js';
export type * from './tables/mail-accounts.js';
export type * from './tables/mailbox-migration.js';
export type * from './tables/mailbox-reader.js';
export type * from './tables/mailer-tenants.js';
export type * from './tables/notifications.js';
export type * from './tables/people.js';
export type * from './tables/ratings.js';
export type * from './tables/realtime.js';
export type * from './tables/reports.js';
export type * from './tables/saved-replies.js';
export type * from './tables/sla.js';
export type * from './tables/team.js';
export type * from './tables/teams.js';
export type * from './tables/views.js';
export type * from './tables/webhooks.js';
export type * from './tables/widget.js';
