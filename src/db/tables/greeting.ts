import type { Generated } from 'kysely';

// Inbox greeting (migration 0019).

export interface InboxGreetingsTable {
  inbox_id: string;
  workspace_id: string;
  enabled: number;
  text_en: string;
  text_tr: string;
  updated_at: string;
}

/** Out-of-office reply per inbox (migration 0052): same shape as the greeting. */
export type InboxAwayRepliesTable = InboxGreetingsTable;

/** One row per automatic answer sent (the once-per-contact-per-24-hours rule reads it). */
export interface GreetingsSentTable {
  message_id: string;
  /** 'greeting' or 'away' (migration 0052). */
  kind: Generated<string>;
  workspace_id: string;
  inbox_id: string;
  contact_id: string;
  conversation_id: string;
  sent_at: string;
}

export interface GreetingTables {
  inbox_greetings: InboxGreetingsTable;
  inbox_away_replies: InboxAwayRepliesTable;
  greetings_sent: GreetingsSentTable;
}
