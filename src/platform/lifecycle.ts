// What a feature adds to the data-lifecycle tables (src/lifecycle/registry.ts): retention rules and
// workspace (and inbox) deletion steps. The types live here, below the features, so that a
// feature's entries do not import the table that lists them.
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';

export interface RetentionRule {
  /** Shown in the retention log line as the count's name, e.g. "webhook_deliveries". */
  name: string;
  /** Deletes at most `batch` rows (and their stored files) that are due at `now`; returns how many. */
  deleteBatch(ctx: Ctx, now: Date, batch: number): Promise<number>;
  /** Rows per batch (default DEFAULT_BATCH); smaller for rows that take many others with them. */
  batchSize?: number;
  /**
   * A batch that deleted fewer than `batch` rows found everything that was due, so the run moves on
   * without asking again (a rule whose count is not of the rows its batch chose leaves it unset).
   */
  shortBatchIsLast?: boolean;
}

/**
 * Adds a batch's counts to the deletion's totals. A step calls it with its own transaction, so the
 * totals stay exact across a crash; a step that does not call it has its returned files counted
 * after it returns.
 */
export type DeletionTally = (trx: Db, counts: { conversations?: number; files?: number }) => Promise<void>;

/** One deleted inbox of a live workspace: what an inbox deletion removes. */
export interface InboxScope {
  workspaceId: string;
  inboxId: string;
}

export interface WorkspaceDataStep {
  name: string;
  /**
   * Deletes at most `batch` rows of a deleted workspace's data (and their stored files).
   * Returns the rows deleted (0 means this step is done) and the files removed from storage.
   */
  deleteBatch(ctx: Ctx, workspaceId: string, batch: number, tally?: DeletionTally): Promise<{ rows: number; files: number }>;
  /**
   * The same for one deleted inbox (the inbox deletion job runs the steps that have it, in this
   * table's order). Steps without it hold nothing that belongs to one inbox.
   */
  deleteInboxBatch?(ctx: Ctx, scope: InboxScope, batch: number, tally?: DeletionTally): Promise<{ rows: number; files: number }>;
  /** Rows per batch (default DEFAULT_BATCH). */
  batchSize?: number;
}

export const DEFAULT_BATCH = 500;
