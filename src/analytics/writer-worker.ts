// The analytics writer's thread (writer-thread.ts): its own connection to the server's SQLite file,
// on which it runs writeBatch for each batch the event loop hands over.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { Kysely } from 'kysely';
import { withStatementCache } from '../db/connection.js';
import type { Database } from '../db/schema.js';
import { SvcSqliteDialect } from '../db/sqlite-dialect.js';
import { writeBatch } from './writer.js';
import type { WriterReply, WriterRequest, WriterThreadData } from './writer-thread.js';

const data = workerData as WriterThreadData;
const sqlite = new SQLite(data.file);
// As the server's own connection (src/db/connection.ts): these are per connection.
sqlite.pragma(`busy_timeout = ${data.waitMs}`);
sqlite.pragma('synchronous = NORMAL');
sqlite.pragma('foreign_keys = ON');
sqlite.pragma('wal_autocheckpoint = 10000');
const db = new Kysely<Database>({ dialect: new SvcSqliteDialect({ database: withStatementCache(sqlite, 100) }) });
const port = parentPort!;

// One message at a time, in order: a close waits for the batches handed over before it.
let queue = Promise.resolve();
port.on('message', (m: WriterRequest) => {
  queue = queue.then(() => handle(m));
});

async function handle(m: WriterRequest): Promise<void> {
  if ('close' in m) {
    await db.destroy();
    port.close();
    return;
  }
  try {
    await writeBatch({ db, config: data.config, clock: { now: () => new Date(m.nowMs) } }, m.batch);
    port.postMessage({ id: m.id } satisfies WriterReply);
  } catch (error) {
    const e = error as { message?: string; code?: string };
    port.postMessage({ id: m.id, error: { message: String(e.message ?? error), code: e.code } } satisfies WriterReply);
  }
}
