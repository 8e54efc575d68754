// Long reads off the event loop on SQLite. better-sqlite3 answers synchronously on the server's one
// thread, so a read of tens of milliseconds (a year's report, the overview's counts, a search, an
// analytics breakdown) held up every request behind it: with 20 people using the panel, lists and
// opening a conversation took 8–14 ms at the median but 25–66 ms at p95 (bench/panel-api, users_).
// Those reads go through `readRows`, which on SQLite compiles the query here and runs it on a reader
// thread: its own read-only connection to the same WAL database, which reads the last committed
// state while the main connection goes on (a read that starts after a commit sees it, so a request
// reads its own writes). Postgres has its pool, and a transaction's reads must see its own
// uncommitted rows: both run the query as before, as does SQLite with SVC_DATABASE_READERS=0.
//
// Threads start on the first read that finds none free (up to the pool's size) and end after
// READER_IDLE_MS without a read: a thread costs its own V8 heap and Node environment (~10 MB of RSS
// when started, as the checkpointer's in connection.ts; 20–25 MB once it has run large scans and
// sorts, measured with two threads), which an idle server does not keep (bench/startup).
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely';
import type { ReadAnswer, ReaderData, ReadRequest } from './reader-thread.js';
import type { Database, Db } from './schema.js';

/** A reader thread ends after this long without a read. */
const READER_IDLE_MS = 10_000;

interface Job {
  request: ReadRequest;
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
}

interface Reader {
  worker: Worker;
  job: Job | undefined;
  idleTimer: NodeJS.Timeout | undefined;
}

export class ReaderPool {
  private readonly readers = new Set<Reader>();
  private readonly free: Reader[] = [];
  private readonly queue: Job[] = [];
  private stopped = false;
  /** Reads sent to a thread so far (for tests). */
  reads = 0;

  constructor(
    private readonly file: string,
    private readonly size: number,
    private readonly busyTimeoutMs: number,
    private readonly idleMs = READER_IDLE_MS,
  ) {}

  /** The rows of a compiled read, run on a reader thread. */
  read(request: ReadRequest): Promise<unknown[]> {
    if (this.stopped) return Promise.reject(new Error('the database is closed'));
    this.reads++;
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  /** Reader threads running now (for tests). */
  get threads(): number {
    return this.readers.size;
  }

  private dispatch(): void {
    while (this.queue.length) {
      const reader = this.free.pop() ?? (this.readers.size < this.size ? this.start() : undefined);
      if (!reader) return;
      clearTimeout(reader.idleTimer);
      const job = this.queue.shift()!;
      reader.job = job;
      // Referenced while it reads: a command awaiting only this read must not exit under it.
      reader.worker.ref();
      reader.worker.postMessage(job.request);
    }
  }

  private start(): Reader {
    const data: ReaderData = { file: this.file, busyTimeoutMs: this.busyTimeoutMs };
    const worker = new Worker(new URL('./reader-thread.js', import.meta.url), { workerData: data });
    const reader: Reader = { worker, job: undefined, idleTimer: undefined };
    this.readers.add(reader);
    worker.on('message', (answer: ReadAnswer) => {
      const job = reader.job;
      reader.job = undefined;
      worker.unref();
      if ('rows' in answer) job?.resolve(answer.rows);
      else job?.reject(sqliteError(answer.error));
      if (this.stopped || !this.readers.has(reader)) return;
      this.free.push(reader);
      reader.idleTimer = setTimeout(() => this.end(reader), this.idleMs);
      reader.idleTimer.unref();
      this.dispatch();
    });
    // The connection could not be opened, or the thread died: its read fails as on the main thread,
    // and the next read starts another thread.
    const gone = (error: unknown) => {
      if (!this.readers.delete(reader)) return;
      const at = this.free.indexOf(reader);
      if (at !== -1) this.free.splice(at, 1);
      clearTimeout(reader.idleTimer);
      reader.job?.reject(error);
      reader.job = undefined;
      if (!this.stopped) this.dispatch();
    };
    worker.on('error', (error) => gone(error));
    worker.on('exit', (code) => gone(new Error(`a reader thread ended (exit code ${code})`)));
    return reader;
  }

  /** Idle for idleMs: the thread closes its connection and ends. */
  private end(reader: Reader): void {
    const at = this.free.indexOf(reader);
    if (at === -1 || reader.job) return;
    this.free.splice(at, 1);
    this.readers.delete(reader);
    reader.worker.postMessage('close');
  }

  /** Ends every thread; reads not answered yet fail. */
  async stop(): Promise<void> {
    this.stopped = true;
    const closed = new Error('the database is closed');
    for (const job of this.queue.splice(0)) job.reject(closed);
    const readers = [...this.readers];
    this.readers.clear();
    this.free.length = 0;
    for (const reader of readers) {
      clearTimeout(reader.idleTimer);
      reader.job?.reject(closed);
      reader.job = undefined;
    }
    await Promise.all(readers.map((r) => r.worker.terminate()));
  }
}

/** An error of a reader thread as better-sqlite3 throws it on the main thread (same code: SQLITE_BUSY answers 503 busy). */
function sqliteError(error: { message: string; code: string | undefined }): Error {
  if (error.code?.startsWith('SQLITE_')) return new SQLite.SqliteError(error.message, error.code);
  return Object.assign(new Error(error.message), error.code ? { code: error.code } : {});
}

// The reader pool behind each Kysely instance openDatabase made on SQLite (not its transactions).
const pools = new WeakMap<object, ReaderPool>();

export function setReaderPool(db: object, pool: ReaderPool): void {
  pools.set(db, pool);
}

/** The reader pool behind `db`; undefined on Postgres, for a transaction, and with SVC_DATABASE_READERS=0. */
export function readerPoolOf(db: object): ReaderPool | undefined {
  return pools.get(db);
}

function isRawBuilder<R>(query: Compilable<R> | RawBuilder<R>): query is RawBuilder<R> {
  return (query as RawBuilder<R>).isRawBuilder === true;
}

/**
 * The rows of a read-only query: on a reader thread when `db` has a reader pool (see the header),
 * otherwise through `db` as `.execute()` would. Only for reads that may see the last committed state
 * (not a transaction's own rows: a transaction's `db` has no pool, so those run in it anyway).
 */
export async function readRows<R>(db: Db, query: Compilable<R> | RawBuilder<R>): Promise<R[]> {
  const compiled: CompiledQuery<R> = isRawBuilder(query) ? query.compile(db as Kysely<Database>) : query.compile();
  const pool = readerPoolOf(db);
  if (!pool) return (await db.executeQuery(compiled)).rows;
  return (await pool.read({ sql: compiled.sql, parameters: compiled.parameters })) as R[];
}
