// Saved views (migration 0056): named conversation filters, personal or shared with the workspace.

export interface SavedViewsTable {
  id: string;
  workspace_id: string;
  /** The member whose personal view it is; null: shared with the workspace. */
  owner_id: string | null;
  name: string;
  /** JSON of the filter (src/conversations/filters.ts ViewFilter). */
  filters: string;
  sort: 'created' | 'activity' | 'sla_due';
  /** Order in the sidebar within its group (shared, or the owner's own). */
  position: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ViewTables {
  saved_views: SavedViewsTable;
}
