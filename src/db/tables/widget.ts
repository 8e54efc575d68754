export interface ContactSessionsTable {
  id: string;
  workspace_id: string;
  channel_id: string;
  inbox_id: string;
  contact_id: string;
  token_hash: string;
  verified: number;
  created_at: string;
  last_used_at: string;
  expires_at: string;
}

export interface ContactSessionConversationsTable {
  session_id: string;
  conversation_id: string;
}

/** One file uploaded through the widget, for the upload quotas (migration 0032). */
export interface WidgetUploadsTable {
  attachment_id: string;
  workspace_id: string;
  session_id: string;
  /** sha256 of the client address (the address itself is not kept). */
  address_hash: string;
  size: number;
  /** 1 once a message carries it. */
  sent: number;
  created_at: string;
}

export interface WidgetTables {
  contact_sessions: ContactSessionsTable;
  contact_session_conversations: ContactSessionConversationsTable;
  widget_uploads: WidgetUploadsTable;
}
