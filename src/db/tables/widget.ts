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

export interface WidgetTables {
  contact_sessions: ContactSessionsTable;
  contact_session_conversations: ContactSessionConversationsTable;
}
