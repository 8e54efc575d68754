// Notifications to the team (migration 0018).
import type { ColumnType } from 'kysely';

export type NotificationTrigger =
  | 'new_conversation'
  | 'assigned'
  | 'customer_reply'
  | 'mention'
  | 'snooze_ended'
  | 'sla_warning'
  | 'sla_breached'
  | 'reply_held'
  /** An e-mail channel's Google or Microsoft sign-in was refused, sending a reply or reading the mailbox (src/mail-accounts): managers only. */
  | 'sign_in_required';

export interface NotificationPreferencesTable {
  person_id: string;
  /** JSON: { [trigger]: { realtime, push, email } } (only what differs from the defaults is needed). */
  settings: string;
  updated_at: string;
}

export interface NotificationsTable {
  id: string;
  person_id: string;
  workspace_id: string;
  /** The event that caused it; (event_id, person_id) is unique, so a re-run job notifies nobody twice. */
  event_id: string;
  trigger: NotificationTrigger;
  /** The conversation it is about; null for a notification about a channel (0069). */
  conversation_id: string | null;
  /** The channel it is about when there is no conversation (a mailbox reader's refused sign-in, 0069). */
  channel_id: ColumnType<string | null, string | null | undefined, string | null>;
  title: string;
  body: string;
  created_at: string;
  /** When the member read it (opened it, or marked it or all read); null while unread (0033). */
  read_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1 when shown under the bell: the member wanted this trigger "in the panel" when it was made (0033). */
  in_panel: ColumnType<number, number | undefined, number>;
}

export interface NotificationMailLinesTable {
  notification_id: string;
  person_id: string;
  created_at: string;
}

export interface NotificationTables {
  notification_preferences: NotificationPreferencesTable;
  notifications: NotificationsTable;
  notification_mail_lines: NotificationMailLinesTable;
}
