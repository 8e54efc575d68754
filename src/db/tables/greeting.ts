// Inbox greeting (migration 0019).

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

export interface GreetingTables {
  inbox_greetings: InboxGreetingsTable;
  greetings_sent: GreetingsSentTable;
}
