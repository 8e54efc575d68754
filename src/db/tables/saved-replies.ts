// Saved replies and signatures (migration 0017).

export type SavedReplyScope = 'workspace' | 'personal';

export interface SavedRepliesTable {
  id: string;
  workspace_id: string;
  scope: SavedReplyScope;
  /** The person a personal reply belongs to; null for workspace replies. */
  owner_id: string | null;
  /** owner_id, or '' for workspace replies: names are unique per (workspace, owner_key, name_key). */
  owner_key: string;
  name: string;
  name_key: string;
  /** Plain text (made from `html` when there is html). */
  body: string;
  /** Sanitized html when the reply is formatted (migration 0059), else null. */
  html: string | null;
  search_text: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface MemberSignaturesTable {
  workspace_id: string;
  person_id: string;
  body: string;
  html: string | null;
  updated_at: string;
}

export interface InboxSignaturesTable {
  inbox_id: string;
  workspace_id: string;
  body: string;
  html: string | null;
  updated_at: string;
}

export interface SavedReplyTables {
  saved_replies: SavedRepliesTable;
  member_signatures: MemberSignaturesTable;
  inbox_signatures: InboxSignaturesTable;
}
