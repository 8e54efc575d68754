// Inbox greeting, satisfaction ratings and report totals (migration 0018).
import type { Generated } from 'kysely';

export interface InboxGreetingsTable {
  inbox_id: string;
  workspace_id: string;
  enabled: number;
  text_en: string;
  text_tr: string;
  updated_at: string;
}

/** One row per greeting sent (the once-per-contact-per-24-hours rule reads it). */
export interface GreetingsSentTable {
  message_id: string;
  workspace_id: string;
  inbox_id: string;
  contact_id: string;
  conversation_id: string;
  sent_at: string;
}

export interface InboxRatingSettingsTable {
  inbox_id: string;
  workspace_id: string;
  enabled: number;
  updated_at: string;
}

export type RatingRequestStatus = 'pending' | 'sent' | 'failed' | 'answered';

/** The one request per conversation (a unique index): a conversation is asked once. */
export interface RatingRequestsTable {
  id: string;
  workspace_id: string;
  inbox_id: string;
  conversation_id: string;
  contact_id: string;
  via: 'email' | 'chat';
  status: RatingRequestStatus;
  error: string | null;
  created_at: string;
  expires_at: string;
  answered_at: string | null;
}

/** Per-day totals per inbox and member ('' = no member). */
export interface ReportDaysTable {
  workspace_id: string;
  day: string;
  inbox_id: string;
  member_id: string;
  opened: Generated<number>;
  closed: Generated<number>;
  replies: Generated<number>;
  ratings: Generated<number>;
  rating_sum: Generated<number>;
  rating_1: Generated<number>;
  rating_2: Generated<number>;
  rating_3: Generated<number>;
  rating_4: Generated<number>;
  rating_5: Generated<number>;
}

export type ReportDurationKind = 'first_response' | 'resolution';

export interface ReportDurationsTable {
  workspace_id: string;
  day: string;
  inbox_id: string;
  member_id: string;
  kind: ReportDurationKind;
  conversation_id: string;
  seconds: number;
}

export interface CustomerCareTables {
  inbox_greetings: InboxGreetingsTable;
  greetings_sent: GreetingsSentTable;
  inbox_rating_settings: InboxRatingSettingsTable;
  rating_requests: RatingRequestsTable;
  report_days: ReportDaysTable;
  report_durations: ReportDurationsTable;
}
