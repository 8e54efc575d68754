// Table types of the data lifecycle: workspace and inbox deletions in progress (and finished).
import type { Generated } from 'kysely';

export interface WorkspaceDeletionsTable {
  /** No foreign key: the row outlives the workspace row, which goes last. */
  workspace_id: string;
  requested_at: string;
  /** The person who asked, or "operator" for the command. */
  requested_by: string;
  /** Totals so far, written in the transactions that delete (exact after a crash). */
  conversations_deleted: Generated<number>;
  files_deleted: Generated<number>;
  runs: Generated<number>;
  finished_at: string | null;
}

/** An inbox deletion in progress (and finished), added by 0014. */
export interface InboxDeletionsTable {
  /** No foreign key: the row outlives the inbox row, which goes last. */
  inbox_id: string;
  workspace_id: string;
  requested_at: string;
  /** The person or API key that asked. */
  requested_by: string;
  conversations_deleted: Generated<number>;
  files_deleted: Generated<number>;
  runs: Generated<number>;
  finished_at: string | null;
}

export interface LifecycleTables {
  workspace_deletions: WorkspaceDeletionsTable;
  inbox_deletions: InboxDeletionsTable;
}
