// The SQLite checkpointer thread (src/db/connection.ts) runs while the connection writes: a write
// that changes the WAL starts it, it copies the WAL into the database file, and it ends once the WAL
// did not change for CHECKPOINTER_QUIET_MS, so that an idle server does not keep a thread's heap.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { CHECKPOINTER_QUIET_MS, openDatabase } from '../../src/db/connection.js';
import { waitUntil } from '../helpers/lifecycle.js';

const threads = () => fs.readdirSync('/proc/self/task').length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a write starts the checkpointer thread, which copies the WAL and ends when writes stop', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ckpt-'));
  const handle = openDatabase({ dataDir });
  try {
    await sql`select 1`.execute(handle.db);
    // libuv's pool threads start on their first use (the checkpointer's WAL check uses them): started
    // before the count, so that only the checkpointer thread moves it.
    await fs.promises.stat(dataDir);
    await sleep(300);
    const idle = threads();
    // Polled, not slept: on a loaded machine a thread takes its time to start or end.
    const threadsBecome = (n: number, what: string) => waitUntil(() => threads() === n, 15_000, what);
    await sql`create table t (x text)`.execute(handle.db);
    await sql`insert into t values (${'x'.repeat(100_000)})`.execute(handle.db);
    await threadsBecome(idle + 1, 'the checkpointer thread runs after a write');
    // Checkpointed: the database file holds the table without the WAL.
    const copy = path.join(dataDir, 'copy.db');
    const SQLite = (await import('better-sqlite3')).default;
    const lengthInFile = () => {
      fs.copyFileSync(path.join(dataDir, 'svc.db'), copy);
      const other = new SQLite(copy, { readonly: true });
      try {
        return (other.prepare('select length(x) as n from t').get() as { n: number }).n;
      } catch {
        return undefined; // not copied yet: no table in the file
      } finally {
        other.close();
      }
    };
    assert.equal(await waitUntil(lengthInFile, 15_000, 'the WAL copied into the database file'), 100_000);
    await sleep(CHECKPOINTER_QUIET_MS);
    await threadsBecome(idle, 'the thread ended after the quiet time');
    // An update that changes no row writes nothing to the WAL (an idle server's outbox claim).
    await sql`update t set x = ${'z'} where x = ${'none'}`.execute(handle.db);
    await sleep(300);
    assert.equal(threads(), idle, 'a write that changed nothing does not start it');
    await sql`insert into t values (${'y'})`.execute(handle.db);
    await threadsBecome(idle + 1, 'the next write starts it again');
  } finally {
    await handle.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
