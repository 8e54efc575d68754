import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { type DurableFs, nodeDurableFs, SharedFlush } from '../platform/durable.js';
import { busy } from '../platform/errors.js';
import { afterYoungGenerationHold } from '../platform/heap.js';
import { ReaderPool, setReaderPool } from './readers.js';
import type { Database } from './schema.js';
import { SvcSqliteDialect } from './sqlite-dialect.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DbHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Path of the SQLite file, for backups; undefined on Postgres. */
  sqliteFile?: string;
  /**
   * Resolves once every transaction committed before the call is on disk (see `walFlush`); on
   * Postgres a commit already is (synchronous_commit, the default, which svc keeps).
   */
  flushCommits(): Promise<void>;
  close(): Promise<void>;
}

// int8 (count(*), bigint columns) and numeric arrive as text from pg; both dialects hand out numbers.
const numericTypes = (types: typeof pg.types) => ({
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v);
    if (oid === 1700) return (v: string) => Number(v);
    return types.getTypeParser(oid, format as 'text');
  },
});

export function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  poolSize?: number;
  /**
   * How long a query waits for a free connection of the Postgres pool, or for SQLite's write lock
   * held by another process (busy_timeout), before it fails with 503 busy (default 5 s).
   */
  waitMs?: number;
  applicationName?: string;
  durable?: DurableFs;
  /** SQLite: at most this many reader threads for long reads (src/db/readers.ts); 0 or unset: none. */
  readers?: number;
}): DbHandle {
  if (opts.databaseUrl) {
    // Loaded only here: a server on SQLite never pays for the Postgres driver.
    const { Pool, types } = createRequire(import.meta.url)('pg') as typeof pg;
    const pool = new Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      types: numericTypes(types),
      connectionTimeoutMillis: opts.waitMs ?? 5000,
      ...(opts.applicationName ? { application_name: opts.applicationName } : {}),
    });
    // A dropped connection must not take the process down; the next query reconnects.
    pool.on('error', () => {});
    answerBusyWhenExhausted(pool);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    postgresPools.set(db, pool);
    return { db, dialect: 'postgres', flushCommits: async () => {}, close: () => db.destroy() };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = path.join(opts.dataDir, 'svc.db');
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${opts.waitMs ?? 5000}`);
  // NORMAL: a commit writes the WAL without flushing it (a flush would block the event loop); the
  // commits that must survive power loss are flushed with `walFlush` instead.
  sqlite.pragma('synchronous = NORMAL');
  // Checkpoints (copying the WAL into the database file, with its fsync) run on a worker thread so
  // that they do not stall the event loop; the connection's own checkpoint stays as a fallback for
  // a WAL that grows past 10,000 pages.
  sqlite.pragma('wal_autocheckpoint = 10000');
  const checkpointer = new Checkpointer(file);
  const db = new Kysely<Database>({ dialect: new SvcSqliteDialect({ database: withStatementCache(sqlite, 1000, () => checkpointer.wrote()) }) });
  sqliteConnections.set(db, sqlite);
  checkpointers.set(db, checkpointer);
  const readers = opts.readers ? new ReaderPool(file, opts.readers, opts.waitMs ?? 5000) : undefined;
  if (readers) setReaderPool(db, readers);
  return {
    db,
    dialect: 'sqlite',
    sqliteFile: file,
    flushCommits: walFlush(file, opts.durable ?? nodeDurableFs),
    close: async () => {
      await readers?.stop();
      await checkpointer.stop();
      await db.destroy();
    },
  };
}

// pg-pool's error when no connection came free within connectionTimeoutMillis (pg-pool/index.js).
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * Every connection is busy and none came free in time: the request is answered 503 busy with
 * Retry-After (a typed error, see src/http/errors.ts) instead of an internal error. Kysely takes
 * connections with `connect()`, pool.query with `connect(callback)`; both go through here.
 */
function answerBusyWhenExhausted(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (cb?: (err: Error | undefined, ...rest: unknown[]) => void) => Promise<pg.PoolClient> | undefined;
  const translate = (err: Error | undefined) => (err?.message === POOL_WAIT_TIMEOUT ? busy(1, 'every database connection is in use; try again shortly') : err);
  pool.connect = ((cb?: (err: Error | undefined, ...rest: unknown[]) => void) => {
    if (cb) return connect((err, ...rest) => cb(translate(err), ...rest));
    return connect()!.catch((err: Error) => {
      throw translate(err);
    });
  }) as typeof pool.connect;
}

// The better-sqlite3 connection behind each Kysely instance openDatabase made (not its transactions).
const sqliteConnections = new WeakMap<object, SQLite.Database>();

/**
 * The SQLite connection behind `db`, for the few reads that run on it directly
 * (src/db/reusable-query.ts); undefined on Postgres and for a transaction's Kysely.
 */
export function sqliteConnectionOf(db: object): SQLite.Database | undefined {
  return sqliteConnections.get(db);
}

const checkpointers = new WeakMap<object, Checkpointer>();

/**
 * Another connection to `db`'s SQLite file (a thread's own, src/analytics/writer-thread.ts) wrote:
 * the checkpointer looks at the WAL as after a write of `db`'s own.
 */
export function noteWriteElsewhere(db: object): void {
  checkpointers.get(db)?.wrote();
}

// The pg pool behind each Kysely instance openDatabase made on Postgres (not its transactions).
const postgresPools = new WeakMap<object, pg.Pool>();

/**
 * The Postgres pool behind `db`, for the few reads that run on it directly as named prepared
 * statements (src/db/reusable-query.ts); undefined on SQLite and for a transaction's Kysely.
 */
export function postgresPoolOf(db: object): pg.Pool | undefined {
  return postgresPools.get(db);
}

/**
 * What `synchronous = FULL` would do at each commit, done off the event loop and shared between
 * commits: fdatasync of the WAL file (on the libuv pool) after the commit has written its frames.
 * Any descriptor of the file flushes them. A checkpoint cannot undo it: with NORMAL, SQLite flushes
 * the WAL before a checkpoint copies it and the database file after, and only a fully copied WAL
 * is rewritten from its start, so a flushed commit is on disk in the WAL or in the database file.
 * The data directory is flushed once, for the WAL file's own entry. Concurrent callers share
 * flushes (SharedFlush): one batch of mail costs about one fdatasync.
 */
function walFlush(file: string, durable: DurableFs): () => Promise<void> {
  const wal = `${file}-wal`;
  let dirFlushed = false;
  const shared = new SharedFlush(async () => {
    try {
      await durable.syncFile(wal);
    } catch (error) {
      // No WAL file: every commit has been checkpointed into the database file and flushed with it.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (!dirFlushed) {
      await durable.syncDir(path.dirname(file));
      dirFlushed = true;
    }
  });
  return () => shared.sync(wal);
}

const CHECKPOINT_EVERY_MS = 200;
/** The checkpointer thread ends once the WAL has not changed for this long (ten checkpoint rounds). */
export const CHECKPOINTER_QUIET_MS = 2000;

/**
 * The checkpointer thread runs while the WAL changes: a statement that may write has the WAL's size
 * and time looked at (once at a time, off the event loop), and a change starts the thread; it ends
 * once the WAL did not change for CHECKPOINTER_QUIET_MS. A thread costs its own V8 heap and Node
 * environment, ~10 MB of an idle server's RSS (bench/startup). The WAL is looked at rather than the
 * statements counted because an idle server's polls (the webhook outbox's claim every second) run
 * updates that change no row and write nothing; its presence beat every 15 s does write.
 */
class Checkpointer {
  private worker: Worker | undefined;
  private starting = false;
  private looking = false;
  private lookAgain = false;
  private stopped = false;
  /** The WAL's size and modification time when last looked at. */
  private seen = '';
  private quietTimer: NodeJS.Timeout | undefined;

  constructor(private readonly file: string) {}

  /** A statement that may write runs now (its frames are in the WAL once it or its transaction commits). */
  wrote(): void {
    if (this.worker || this.starting || this.stopped) return;
    if (this.looking) {
      this.lookAgain = true;
      return;
    }
    this.looking = true;
    // After the statement has run (it runs in the same turn of the event loop).
    setImmediate(() => {
      this.walChanged().then((changed) => {
        this.looking = false;
        if (changed) this.start();
        else if (this.lookAgain) {
          this.lookAgain = false;
          this.wrote();
        }
      });
    });
  }

  private async walChanged(): Promise<boolean> {
    const now = await fs.promises.stat(`${this.file}-wal`, { bigint: true }).then(
      (s) => `${s.size}:${s.mtimeNs}`,
      () => '',
    );
    const changed = now !== this.seen;
    this.seen = now;
    return changed;
  }

  private start(): void {
    if (this.worker || this.starting || this.stopped) return;
    this.starting = true;
    // While `serve` starts (migrations), the thread waits until the server listens.
    afterYoungGenerationHold(() => {
      this.starting = false;
      if (this.stopped) return;
      this.worker = startCheckpointer(this.file);
      // Quiet from now on: the writes before the thread started (migrations) do not keep it.
      void this.walChanged();
      this.scheduleQuietCheck();
    });
  }

  private scheduleQuietCheck(): void {
    this.quietTimer = setTimeout(async () => {
      if (this.stopped) return;
      if (await this.walChanged()) return this.scheduleQuietCheck();
      const worker = this.worker;
      this.worker = undefined;
      void worker?.terminate();
    }, CHECKPOINTER_QUIET_MS);
    this.quietTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.quietTimer);
    await this.worker?.terminate();
    this.worker = undefined;
  }
}

/** A worker thread with its own connection that checkpoints the WAL (PASSIVE: never waits for readers or writers). */
function startCheckpointer(file: string): Worker {
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     const Database = require(workerData.module);
     const db = new Database(workerData.file);
     db.pragma('busy_timeout = 1000');
     setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, workerData.everyMs);`,
    { eval: true, workerData: { file, module: createRequire(import.meta.url).resolve('better-sqlite3'), everyMs: CHECKPOINT_EVERY_MS } },
  );
  worker.unref();
  // A failing checkpointer leaves the work to the connection's own fallback checkpoints.
  worker.on('error', () => {});
  return worker;
}

/** Statements with more parameters than this (an `in` list, a multi-row insert) are kept apart. */
export const MANY_PARAMETERS = 32;
/** Those are kept while their parameters add up to at most this (about 200 bytes of SQLite's memory each). */
export const KEPT_PARAMETERS = 100_000;

// SQLite counts a `begin immediate` as writing (it takes the write lock), a `commit` as read-only
// (it is where a transaction's frames reach the WAL), and an `insert … returning` as writing.
const BEGIN = /^begin\b/i;
const COMMIT = /^(commit|end)\b/i;

function writes(text: string, statement: SQLite.Statement): boolean {
  return statement.readonly ? COMMIT.test(text) : !BEGIN.test(text);
}

function parameterCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('?'); i !== -1; i = text.indexOf('?', i + 1)) n++;
  return n;
}

/**
 * Kysely prepares every query afresh; preparing costs more than running a small query, so the
 * statements of the most recent distinct SQL texts are kept (kysely runs one query at a time on
 * this connection, so a cached statement is never in use twice).
 *
 * Statements with many parameters are kept apart, within KEPT_PARAMETERS: a statement's compiled
 * program lives in SQLite's native memory, about 200 bytes per parameter (100 KB for an `in` list
 * of 500), and lists and multi-row inserts change length from call to call. A migration copy's
 * batch makes a dozen such texts (its one-time lookups, its inserts), so a cache of 1,000
 * statements of any size filled with tens of MB that no heap figure shows (issue 19). Preparing
 * such a statement again costs little next to the work it does.
 *
 * Transactions begin IMMEDIATE: a deferred transaction that reads and then writes fails at once
 * (SQLITE_BUSY_SNAPSHOT, which busy_timeout does not wait out) when another process — a command
 * run next to the server — committed in between.
 *
 * `onWrite` is called for each statement handed out that may change the database, before it runs:
 * those SQLite does not call read-only, but `begin`, and `commit`.
 */
export function withStatementCache(sqlite: SQLite.Database, max = 1000, onWrite?: () => void) {
  const few = new Map<string, SQLite.Statement>();
  const many = new Map<string, { statement: SQLite.Statement; parameters: number }>();
  let manyParameters = 0;
  return {
    close: () => sqlite.close(),
    prepare(original: string) {
      const text = original === 'begin' ? 'begin immediate' : original;
      let statement = few.get(text);
      if (statement) {
        few.delete(text);
        few.set(text, statement);
        if (onWrite && writes(text, statement)) onWrite();
        return statement;
      }
      const kept = many.get(text);
      if (kept) {
        many.delete(text);
        many.set(text, kept);
        if (onWrite && writes(text, kept.statement)) onWrite();
        return kept.statement;
      }
      statement = sqlite.prepare(text);
      if (onWrite && writes(text, statement)) onWrite();
      const parameters = parameterCount(text);
      if (parameters <= MANY_PARAMETERS) {
        if (few.size >= max) few.delete(few.keys().next().value!);
        few.set(text, statement);
      } else if (parameters <= KEPT_PARAMETERS) {
        for (const [oldest, { parameters: n }] of many) {
          if (manyParameters + parameters <= KEPT_PARAMETERS) break;
          many.delete(oldest);
          manyParameters -= n;
        }
        many.set(text, { statement, parameters });
        manyParameters += parameters;
      }
      return statement;
    },
    /** What is kept (for tests): statements, and those with many parameters and their parameters. */
    cached: () => ({ statements: few.size + many.size, many: many.size, manyParameters }),
  };
}

/** True when the database answers within the time limit. Used by /readyz. */
export async function pingDatabase(db: Kysely<Database>, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const ping = sql`select 1`.execute(db).then(() => true);
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    return await Promise.race([ping, late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
