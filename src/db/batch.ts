// Group commit: transactional works submitted while one batch runs are run together in the next
// transaction, each inside its own savepoint, and all of them are answered after that one commit.
// Under concurrent inbound mail this turns many small commits (each a WAL write, or an fsync on
// Postgres) into a few larger ones; a single work behaves exactly like its own transaction.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from './schema.js';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;
interface Pending {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class TransactionBatcher {
  private queue: Pending[] = [];
  private running = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxBatch = 32,
  ) {}

  /** Runs `work` in a transaction (possibly shared); resolves with its result once committed. */
  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        // One turn of the event loop lets works that are ready at the same time join the batch.
        setImmediate(() => void this.loop());
      }
    });
  }

  private async loop(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        await this.runBatch(batch);
      }
    } finally {
      this.running = false;
    }
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        if (batch.length === 1) {
          outcomes.push({ ok: true, value: await batch[0].work(trx) });
          return;
        }
        for (let i = 0; i < batch.length; i++) {
          await sql.raw(`savepoint batch_${i}`).execute(trx);
          try {
            const value = await batch[i].work(trx);
            await sql.raw(`release savepoint batch_${i}`).execute(trx);
            outcomes.push({ ok: true, value });
          } catch (error) {
            // Only this work is undone; the others of the batch go on.
            await sql.raw(`rollback to savepoint batch_${i}`).execute(trx);
            await sql.raw(`release savepoint batch_${i}`).execute(trx);
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The work of a batch of one, or the commit itself, failed: nothing of the batch is stored.
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }
}
