// The loop both deletion jobs share (a workspace's, an inbox's): the steps in order, each in batches
// until it returns 0, for up to a budget per run. Totals are added in the transaction of the batch
// that deleted (the step calls `tally`), so a crash never counts a batch twice or not at all.
import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import { DEFAULT_BATCH, type DeletionTally } from './registry.js';

export interface DeletionStepRun {
  name: string;
  batchSize?: number;
  deleteBatch(batch: number, tally: DeletionTally): Promise<{ rows: number; files: number }>;
}

/** Runs the steps until all are done (true) or the budget is spent (false: run again). */
export async function runDeletionSteps(
  steps: readonly DeletionStepRun[],
  addToTotals: (db: Db, counts: { conversations?: number; files?: number }) => Promise<void>,
  fallbackDb: Db,
  budgetMs: number,
): Promise<boolean> {
  const started = performance.now();
  for (const step of steps) {
    for (;;) {
      let tallied = false;
      const tally: DeletionTally = async (trx, counts) => {
        tallied = true;
        await addToTotals(trx, counts);
      };
      const r = await step.deleteBatch(step.batchSize ?? DEFAULT_BATCH, tally);
      if (!tallied && r.files > 0) await addToTotals(fallbackDb, { files: r.files });
      if (r.rows === 0) break;
      if (performance.now() - started > budgetMs) return false;
    }
  }
  return true;
}

/** A deletion's progress row: the inbox's in inbox_deletions or the workspace's in workspace_deletions. */
export type DeletionRecord =
  | { table: 'inbox_deletions'; column: 'inbox_id'; id: string }
  | { table: 'workspace_deletions'; column: 'workspace_id'; id: string };

/** Adds a batch's counts to the deletion's totals (the `tally` of runDeletionSteps). */
export async function addToDeletionTotals(db: Db, record: DeletionRecord, counts: { conversations?: number; files?: number }): Promise<void> {
  if (!counts.conversations && !counts.files) return;
  await sql`update ${sql.table(record.table)}
    set conversations_deleted = conversations_deleted + ${counts.conversations ?? 0}, files_deleted = files_deleted + ${counts.files ?? 0}
    where ${sql.ref(record.column)} = ${record.id}`.execute(db);
}

/** Counts one more run of the deletion; returns its totals and the conversations still left in its scope. */
export async function countDeletionRun(
  db: Db,
  record: DeletionRecord,
): Promise<{ conversations_deleted: number; conversations_left: number; files_deleted: number }> {
  const table = sql.table(record.table);
  const column = sql.ref(record.column);
  await sql`update ${table} set runs = runs + 1 where ${column} = ${record.id}`.execute(db);
  const totals = await sql<{
    conversations_deleted: number | string;
    files_deleted: number | string;
  }>`select conversations_deleted, files_deleted from ${table} where ${column} = ${record.id}`.execute(db);
  // conversations has both inbox_id and workspace_id, so the record's column names its scope there too.
  const left = await sql<{ n: number | string }>`select count(*) as n from conversations where ${column} = ${record.id}`.execute(db);
  const row = totals.rows[0];
  if (!row) throw new Error(`no ${record.table} row for ${record.id}`);
  return { conversations_deleted: Number(row.conversations_deleted), conversations_left: Number(left.rows[0].n), files_deleted: Number(row.files_deleted) };
}
