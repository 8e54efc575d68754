// Group commit: transactional works submitted while one batch runs are run together in the next
// transaction, each inside its own savepoint, and all of them are answered after that one commit
// and its flush to disk (`flushCommits`); the next batch starts once that flush has ended, so works
// that come during a flush share the commit after it. Under concurrent inbound mail this turns many small
// commits (each a WAL write and an fdatasync, or an fsync on Postgres) into a few larger ones; a
// single work behaves exactly like its own transaction.
//
// A work that fails inside the batch is rolled back to its savepoint and only it is refused. When
// the batch's transaction fails as a whole (its commit, a savepoint the database dropped), nothing
// of it is stored, and every work is run again in a transaction of its own, so that only the works
// that fail by themselves are refused and none is stored twice.
//
// Files a work refers to (an inbound mail's .eml and attachments) may come with it unflushed: they
// are flushed, the files of all works waiting together and each of their directories once, before
// the work may join a transaction, so a row never points at a file a power cut could lose. Files
// are flushed while the previous batch commits and flushes its commit (two stages of a pipeline:
// the disk works on the next batch's files and on the last batch's WAL at the same time).
import { type Kysely, sql, type Transaction } from 'kysely';
import type { WrittenFile } from '../platform/storage.js';
import type { Database } from './schema.js';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;
interface Pending {
  work: Work<unknown>;
  files: readonly WrittenFile[];
  resolve(value: unknown): void;
  reject(error: unknown): void;
}
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface BatcherOptions {
  /** The most works in one transaction. */
  maxBatch?: number;
  /** Resolves once what was committed before the call is on disk (DbHandle.flushCommits). */
  flushCommits?: () => Promise<void>;
  /** Makes the works' files durable (Storage.flushWritten); needed when works come with files. */
  flushFiles?: (files: readonly WrittenFile[]) => Promise<void>;
}

export class TransactionBatcher {
  /** Works whose files are being flushed or wait for the next file flush. */
  private unflushed: Pending[] = [];
  /** Works that may join the next transaction (files flushed, or none). */
  private ready: Pending[] = [];
  private flushingFiles = false;
  /** The running flush of a group of works' files (never rejects: failed works are refused). */
  private fileFlush: Promise<void> | undefined;
  private committing = false;
  private readonly maxBatch: number;
  private readonly flushCommits: () => Promise<void>;
  private readonly flushFiles: (files: readonly WrittenFile[]) => Promise<void>;
  /** The last batch's flush and answers (never rejects: a failed flush refuses that batch's works). */
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    opts: BatcherOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 32;
    this.flushCommits = opts.flushCommits ?? (async () => {});
    this.flushFiles =
      opts.flushFiles ??
      (async (files) => {
        if (files.length) throw new Error('this batcher cannot flush files');
      });
  }

  /**
   * Runs `work` in a transaction (possibly shared); resolves with its result once committed and
   * flushed. `files` (written, not yet flushed) are on disk before that transaction commits.
   */
  run<T>(work: Work<T>, opts: { files?: readonly WrittenFile[] } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { work, files: opts.files ?? [], resolve: resolve as (v: unknown) => void, reject };
      if (pending.files.length) {
        this.unflushed.push(pending);
        this.startFileFlushes();
      } else {
        this.ready.push(pending);
        this.startCommits();
      }
    });
  }

  /** Resolves once everything committed so far is on disk (for answers about rows committed elsewhere). */
  flush(): Promise<void> {
    return this.flushCommits();
  }

  private startFileFlushes(): void {
    if (this.flushingFiles) return;
    this.flushingFiles = true;
    // One turn of the event loop lets works that are ready at the same time share the flush.
    setImmediate(() => void this.fileFlushLoop());
  }

  private startCommits(): void {
    if (this.committing) return;
    this.committing = true;
    // One turn of the event loop lets works that are ready at the same time join the batch.
    setImmediate(() => void this.commitLoop());
  }

  /** Flushes the files of the works waiting, together; works that come meanwhile share the next flush. */
  private async fileFlushLoop(): Promise<void> {
    try {
      while (this.unflushed.length) {
        const group = this.unflushed.splice(0);
        this.fileFlush = this.flushBatchFiles(group).then((fileErrors) => {
          group.forEach((p, i) => {
            const failed = fileErrors[i];
            if (failed) p.reject(failed.error);
            else this.ready.push(p);
          });
        });
        await this.fileFlush;
        if (this.ready.length) this.startCommits();
      }
    } finally {
      this.fileFlush = undefined;
      this.flushingFiles = false;
    }
  }

  private async commitLoop(): Promise<void> {
    try {
      while (this.ready.length) {
        // Works that come while the last batch's flush runs would wait for the flush after it
        // anyway: they queue up and are committed together once it ends (fewer commits per work).
        if (this.flushing) await this.flushing;
        // Files being flushed now (alongside that commit's flush) join this batch rather than the next:
        // one commit fewer for about the same wait. Later works' files are the next batch's.
        if (this.fileFlush) await this.fileFlush;
        const batch = this.ready.splice(0, this.maxBatch);
        const outcomes = await this.runTransaction(batch);
        this.flushing = this.answerAfterFlush(batch, outcomes);
      }
    } finally {
      this.committing = false;
    }
  }

  private async answerAfterFlush(batch: Pending[], outcomes: Outcome[]): Promise<void> {
    if (outcomes.some((o) => o.ok)) {
      try {
        await this.flushCommits();
      } catch (error) {
        // Committed but perhaps not on disk: the caller must not acknowledge it (a sender retries,
        // and the duplicate check stores it once).
        for (const p of batch) p.reject(error);
        return;
      }
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }

  /**
   * Flushes the files of the works together (each directory once), before they may join a
   * transaction: the connection is not held while the disk works. Answers, per work, the error that
   * keeps it out: when the flush fails, each work's files are flushed again on their own (those
   * done are not flushed twice), so only the works whose own files fail are refused.
   */
  private async flushBatchFiles(batch: Pending[]): Promise<({ error: unknown } | undefined)[]> {
    const files = batch.flatMap((p) => p.files);
    if (files.length) {
      try {
        await this.flushFiles(files);
      } catch {
        return Promise.all(
          batch.map((p) =>
            p.files.length
              ? this.flushFiles(p.files).then(
                  () => undefined,
                  (error: unknown) => ({ error }),
                )
              : undefined,
          ),
        );
      }
    }
    return batch.map(() => undefined);
  }

  private async runTransaction(batch: Pending[]): Promise<Outcome[]> {
    if (batch.length === 0) return [];
    if (batch.length === 1) return [await this.runAlone(batch[0])];
    const outcomes: Outcome[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
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
      return outcomes;
    } catch {
      // Nothing of the batch is stored: each work on its own, in order.
      const alone: Outcome[] = [];
      for (const p of batch) alone.push(await this.runAlone(p));
      return alone;
    }
  }

  private async runAlone(p: Pending): Promise<Outcome> {
    try {
      return { ok: true, value: await this.db.transaction().execute((trx) => p.work(trx)) };
    } catch (error) {
      return { ok: false, error };
    }
  }
}
