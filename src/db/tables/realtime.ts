// Table types of realtime: one row per live connection (members and keys on /v1/realtime, contacts
// from the widget or an SDK), kept up to date by heartbeats. A contact is online while it has a fresh row.
export type ConnectionKind = 'member' | 'api_key' | 'contact';

export interface RealtimeConnectionsTable {
  id: string;
  workspace_id: string;
  kind: ConnectionKind;
  /** person id, API key id or contact id */
  subject_id: string;
  inbox_id: string | null;
  connected_at: string;
  last_seen_at: string;
  closed_at: string | null;
}

export interface RealtimeTables {
  realtime_connections: RealtimeConnectionsTable;
}
