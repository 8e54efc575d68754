import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type DialectName = 'sqlite' | 'postgres';

export interface DbHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Path of the SQLite file, for backups; undefined on Postgres. */
  sqliteFile?: string;
  close(): Promise<void>;
}

// int8 (count(*), bigint columns) and numeric arrive as text from pg; both dialects hand out numbers.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v);
    if (oid === 1700) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export function openDatabase(opts: { databaseUrl?: string; dataDir: string; poolSize?: number }): DbHandle {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      types: pgTypes,
      connectionTimeoutMillis: 5000,
    });
    // A dropped connection must not take the process down; the next query reconnects.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const file = path.join(opts.dataDir, 'svc.db');
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  // Checkpoint every ~40 MB of WAL instead of every ~4 MB: pages written again and again (index
  // leaves, the newest rows) are copied to the database file once per checkpoint, so a longer
  // interval cuts the writes and fsyncs of frequent small transactions (inbound mail) severalfold.
  sqlite.pragma('wal_autocheckpoint = 10000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, dialect: 'sqlite', sqliteFile: file, close: () => db.destroy() };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Prepares each SQL text once: kysely prepares every query again, which costs as much as running
 * it. Safe because kysely runs one query at a time on the one SQLite connection.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql);
      } else {
        stmt = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
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
