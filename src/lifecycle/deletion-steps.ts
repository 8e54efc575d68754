// The loop both deletion jobs share (a workspace's, an inbox's): the steps in order, each in batches
// until it returns 0, for up to a budget per run. Totals are added in the transaction of the batch
// that deleted (the step calls `tally`), so a crash never counts a batch twice or not at all.
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
