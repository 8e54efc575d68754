// Satisfaction ratings (migration 0019); the rating itself is on conversations.

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

export interface RatingTables {
  inbox_rating_settings: InboxRatingSettingsTable;
  rating_requests: RatingRequestsTable;
}
