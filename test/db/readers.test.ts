// Reader threads (src/db/readers.ts): on SQLite, long reads run on threads with their own read-only
// connection, so that a read of tens of milliseconds does not hold up the requests behind it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { createProperty } from '../../src/analytics/properties.js';
import { openDatabase } from '../../src/db/connection.js';
import { ReaderPool, readerPoolOf, readRows } from '../../src/db/readers.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const postgres = !!process.env.SVC_TEST_DATABASE_URL;
const sqliteOnly = postgres ? 'reader threads are SQLite only (Postgres has its connection pool)' : false;
const threads = () => fs.readdirSync('/proc/self/task').length;
/** A read-only query that keeps SQLite busy for a while (a count over a generated series). */
const slowRead = (n: number) => sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < ${n}) select count(*) as n from c`;

describe('reader threads on a SQLite file', { skip: sqliteOnly }, () => {
  let dataDir: string;
  let handle: ReturnType<typeof openDatabase>;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readers-'));
    handle = openDatabase({ dataDir, readers: 2 });
    await sql`create table t (id integer primary key, name text, note text)`.execute(handle.db);
    await sql`insert into t (id, name, note) values (1, ${'ada'}, null), (2, ${'ben'}, ${'x'})`.execute(handle.db);
  });
  after(async () => {
    await handle.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('a read answers on a thread what the main connection answers; a transaction reads its own rows on its connection', async () => {
    const pool = readerPoolOf(handle.db)!;
    assert.equal(pool.threads, 0, 'no thread before the first read');
    const db = handle.db as any;
    const query = db.selectFrom('t').select(['id', 'name', 'note']).where('id', '>=', 1).orderBy('id');
    assert.deepEqual(await readRows(handle.db, query), await query.execute());
    assert.equal(pool.threads, 1);
    assert.equal(pool.reads, 1);
    const raw = sql<{ n: number; names: string }>`select count(*) as n, group_concat(name) as names from t where id in (${1}, ${2})`;
    assert.deepEqual(await readRows(handle.db, raw), [{ n: 2, names: 'ada,ben' }]);
    // SQLite's percentile functions (reports) are there on the thread too.
    assert.deepEqual(await readRows(handle.db, sql<{ m: number }>`select median(id) as m from t`), [{ m: 1.5 }]);

    // A commit of the main connection is seen by the next read.
    await sql`insert into t (id, name) values (3, ${'cem'})`.execute(handle.db);
    assert.equal((await readRows(handle.db, sql<{ n: number }>`select count(*) as n from t`))[0].n, 3);

    // In a transaction: no pool (its db is not the connection's), so the read sees the transaction's row.
    const before = pool.reads;
    await handle.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into t (id, name) values (4, ${'deniz'})`.execute(trx);
        assert.equal((await readRows(trx, sql<{ n: number }>`select count(*) as n from t`))[0].n, 4);
        // Outside it, the last committed state.
        assert.equal((await readRows(handle.db, sql<{ n: number }>`select count(*) as n from t`))[0].n, 3);
        throw new Error('roll back');
      })
      .catch((error: Error) => assert.equal(error.message, 'roll back'));
    assert.equal(pool.reads, before + 1, 'only the read outside the transaction went to a thread');
  });

  test('a thread refuses writes, and its errors arrive as SqliteError with their code', async () => {
    await assert.rejects(readRows(handle.db, sql`delete from t`), (error: any) => error.code === 'SVC_NOT_A_READ');
    await assert.rejects(
      readRows(handle.db, sql`delete from t returning id`),
      (error: any) => error instanceof SQLite.SqliteError && error.code === 'SQLITE_READONLY',
    );
    assert.equal((await sql<{ n: number }>`select count(*) as n from t`.execute(handle.db)).rows[0].n, 3, 'nothing deleted');
    await assert.rejects(
      readRows(handle.db, sql`select * from no_such_table`),
      (error: any) => error instanceof SQLite.SqliteError && error.code === 'SQLITE_ERROR' && /no such table/.test(error.message),
    );
    // The thread goes on answering after an error.
    assert.equal((await readRows(handle.db, sql<{ n: number }>`select count(*) as n from t`))[0].n, 3);
  });

  test('two long reads run on two threads at once, a third waits for a free one', async () => {
    const pool = readerPoolOf(handle.db)!;
    const reads = [slowRead(300_000), slowRead(300_000), slowRead(300_000)].map((q) => readRows(handle.db, q));
    assert.ok(pool.threads <= 2, 'never more threads than the pool size');
    const rows = await Promise.all(reads);
    assert.deepEqual(
      rows.map((r) => r[0].n),
      [300_000, 300_000, 300_000],
    );
    assert.equal(pool.threads, 2);
  });
});

test('threads start on first use and end after being idle; a stopped pool fails its reads', { skip: sqliteOnly }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readers-'));
  const file = path.join(dataDir, 'svc.db');
  const setup = new SQLite(file);
  setup.pragma('journal_mode = WAL');
  setup.exec('create table t (x integer)');
  const pool = new ReaderPool(file, 2, 1000, 300);
  try {
    // libuv's and the platform's threads started before the count (as in the checkpointer's test).
    await fs.promises.stat(dataDir);
    const idle = threads();
    assert.deepEqual(await pool.read({ sql: 'select 1 as one', parameters: [] }), [{ one: 1 }]);
    assert.equal(pool.threads, 1);
    await waitUntil(() => pool.threads === 0, 15_000, 'the idle thread is let go');
    await waitUntil(() => threads() === idle, 15_000, 'the idle thread has ended');
    assert.deepEqual(await pool.read({ sql: 'select ? as v', parameters: ['again'] }), [{ v: 'again' }], 'a read after that starts one again');
    const pending = assert.rejects(
      pool.read({ sql: 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000) select count(*) from c', parameters: [] }),
      /database is closed/,
    );
    await pool.stop();
    await pending;
    await assert.rejects(pool.read({ sql: 'select 1', parameters: [] }), /database is closed/);
    await waitUntil(() => threads() === idle, 15_000, 'stop ended the thread');
  } finally {
    await pool.stop();
    setup.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SQLITE_BUSY on a thread arrives with its code (answered 503 busy as on the main connection)', { skip: sqliteOnly }, async () => {
  // A thread's reader waits for no writer in WAL mode; a file in rollback mode with an exclusive
  // lock held is what makes a read busy.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readers-'));
  const file = path.join(dataDir, 'rollback.db');
  const writer = new SQLite(file);
  writer.exec('create table t (x integer)');
  writer.exec('begin exclusive');
  writer.exec('insert into t values (1)');
  const pool = new ReaderPool(file, 1, 100);
  try {
    await assert.rejects(
      pool.read({ sql: 'select count(*) from t', parameters: [] }),
      (error: any) => error instanceof SQLite.SqliteError && error.code === 'SQLITE_BUSY',
    );
  } finally {
    await pool.stop();
    writer.exec('rollback');
    writer.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('a long read on a reader thread does not hold up other requests', { skip: sqliteOnly }, () => {
  /** Starts the slow read, then asks /readyz and a conversation list; the order in which they finish. */
  async function race(s: TestServer, token: string, n: number) {
    const order: string[] = [];
    const slow = readRows(s.app.db, slowRead(n)).then((rows) => {
      order.push('slow read');
      return rows;
    });
    const ready = s.request('GET', '/readyz').then((r) => {
      assert.equal(r.status, 200);
      order.push('readyz');
    });
    const list = s.request('GET', '/v1/conversations?status=open', { token }).then((r) => {
      assert.equal(r.status, 200, JSON.stringify(r.body));
      order.push('list');
    });
    const [rows] = await Promise.all([slow, ready, list]);
    assert.equal(rows[0].n, n);
    return order;
  }

  test('with reader threads, /readyz and a list answer while the read runs', async () => {
    const s = await startTestServer();
    try {
      const seed = await seedWorkspace(s.app);
      // Seconds of work on the thread (5,000,000 steps: 1.2 s on a loaded CI core).
      const order = await race(s, seed.ownerToken, 10_000_000);
      assert.equal(order.at(-1), 'slow read', `finished in the order ${order.join(', ')}`);
    } finally {
      await s.stop();
    }
  });

  test('without them (SVC_DATABASE_READERS=0), the same read holds up both (what the threads are for)', async () => {
    const s = await startTestServer({ env: { SVC_DATABASE_READERS: '0' } });
    try {
      const seed = await seedWorkspace(s.app);
      assert.equal(readerPoolOf(s.app.db), undefined);
      const order = await race(s, seed.ownerToken, 1_000_000);
      assert.equal(order[0], 'slow read', `finished in the order ${order.join(', ')}`);
    } finally {
      await s.stop();
    }
  });
});

describe('the long reads of the panel go to the reader threads', () => {
  let s: TestServer;
  let token: string;
  let propertyId: string;
  before(async () => {
    s = await startTestServer();
    const seed = await seedWorkspace(s.app);
    token = seed.ownerToken;
    propertyId = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'readers.example' })).id;
  });
  after(() => s.stop());

  for (const [what, url] of [
    ['the overview', () => '/v1/overview'],
    ['a 30-day report', () => '/v1/reports'],
    ['a year’s report', () => `/v1/reports?from=${day(-364)}&to=${day(0)}`],
    ['a search', () => '/v1/search?q=order'],
    ['a contacts search', () => '/v1/contacts?q=ada'],
    ['analytics stats', () => `/v1/analytics/stats?property_id=${propertyId}&period=30d&metrics=visitors,visits,bounce_rate`],
    ['an analytics breakdown', () => `/v1/analytics/stats?property_id=${propertyId}&period=30d&dimension=visit:source`],
  ] as const) {
    test(`${what} (on Postgres, through the pool as before)`, async () => {
      const pool = readerPoolOf(s.app.db);
      assert.equal(!pool, postgres);
      const before = pool?.reads ?? 0;
      const r = await s.request('GET', url(), { token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (pool) assert.ok(pool.reads > before, `${what} read on a thread`);
    });
  }

  function day(offset: number): string {
    return new Date(s.app.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  }
});
