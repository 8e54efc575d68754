import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Transaction } from 'kysely';
import { TransactionBatcher } from '../../src/db/batch.js';
import type { Database } from '../../src/db/schema.js';
import { startTestServer } from '../helpers/server.js';

describe('group commit (TransactionBatcher)', () => {
  test('works submitted together share a transaction; a failing one is undone alone', async () => {
    const s = await startTestServer();
    try {
      const key = (n: number) => `batch-test-${n}`;
      const insert = (n: number) => (trx: Parameters<Parameters<typeof s.app.writes.run>[0]>[0]) =>
        trx
          .insertInto('server_meta')
          .values({ key: key(n), value: String(n) })
          .execute()
          .then(() => n);
      const results = await Promise.allSettled([
        s.app.writes.run(insert(1)),
        s.app.writes.run(async (trx) => {
          await insert(2)(trx);
          throw new Error('second fails');
        }),
        s.app.writes.run(insert(3)),
        // A constraint violation inside one work leaves the others usable (Postgres aborts the
        // transaction on an error; the savepoint brings it back).
        s.app.writes.run(insert(1)),
        s.app.writes.run(insert(4)),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
      );
      const rows = await s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'batch-test-%').orderBy('key').execute();
      assert.deepEqual(
        rows.map((r) => r.key),
        [key(1), key(3), key(4)],
      );
      // A lone work behaves like its own transaction.
      await assert.rejects(
        s.app.writes.run(async (trx) => {
          await insert(5)(trx);
          await sql`select * from no_such_table`.execute(trx);
        }),
      );
      assert.equal((await s.app.db.selectFrom('server_meta').select('key').where('key', '=', key(5)).execute()).length, 0);
    } finally {
      await s.stop();
    }
  });

  test('a batch that fails as a whole is run again work by work: only the bad one is refused, none is stored twice', async () => {
    const s = await startTestServer();
    try {
      const insert = (n: number) => (trx: Transaction<Database>) =>
        trx
          .insertInto('server_meta')
          .values({ key: `fallback-${n}`, value: String(n) })
          .execute()
          .then(() => n);
      let badRuns = 0;
      const results = await Promise.allSettled([
        s.app.writes.run(insert(1)),
        // Drops its own savepoint before failing, as SQLite does when an I/O error or a full disk
        // rolls the whole transaction back: the batch cannot undo this work alone.
        s.app.writes.run(async (trx) => {
          badRuns++;
          await insert(2)(trx);
          await sql.raw('release savepoint batch_1').execute(trx);
          throw new Error('bad work');
        }),
        s.app.writes.run(insert(3)),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal(badRuns, 2, 'tried in the batch, then alone');
      const rows = await s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'fallback-%').orderBy('key').execute();
      assert.deepEqual(
        rows.map((r) => r.key),
        ['fallback-1', 'fallback-3'],
      );
    } finally {
      await s.stop();
    }
  });

  test('answers wait for the flush to disk; a failed flush refuses what it could not make durable', async () => {
    const s = await startTestServer();
    try {
      let release!: () => void;
      let entered!: () => void;
      const flushEntered = new Promise<void>((r) => (entered = r));
      let failFlush = false;
      const batcher = new TransactionBatcher(s.app.handle.db, {
        flushCommits: () => {
          if (failFlush) return Promise.reject(new Error('EIO'));
          entered();
          return new Promise<void>((r) => (release = r));
        },
      });
      let answered = false;
      const run = batcher.run((trx) => trx.insertInto('server_meta').values({ key: 'flush-1', value: '1' }).execute()).then(() => (answered = true));
      await flushEntered;
      // Committed (another reader sees it) but not yet answered.
      assert.equal((await s.app.db.selectFrom('server_meta').select('key').where('key', '=', 'flush-1').execute()).length, 1);
      await sleep(20);
      assert.equal(answered, false, 'no answer before the flush');
      release();
      await run;
      assert.equal(answered, true);

      failFlush = true;
      await assert.rejects(
        batcher.run((trx) => trx.insertInto('server_meta').values({ key: 'flush-2', value: '2' }).execute()),
        /EIO/,
      );
    } finally {
      await s.stop();
    }
  });
  test('works that come while a flush runs are committed together once it has ended', async () => {
    const s = await startTestServer();
    try {
      const releases: (() => void)[] = [];
      let flushes = 0;
      const batcher = new TransactionBatcher(s.app.handle.db, {
        flushCommits: () => {
          flushes++;
          return new Promise<void>((r) => releases.push(r));
        },
      });
      const transactions: Transaction<Database>[] = [];
      const insert = (key: string) => (trx: Transaction<Database>) => {
        transactions.push(trx);
        return trx.insertInto('server_meta').values({ key, value: key }).execute();
      };
      const stored = async (key: string) => (await s.app.db.selectFrom('server_meta').select('key').where('key', '=', key).execute()).length;
      const first = batcher.run(insert('during-flush-a'));
      while (flushes === 0) await sleep(5);
      // The first batch is committed and its flush held; two works come one after the other.
      const second = batcher.run(insert('during-flush-b'));
      await sleep(20);
      const third = batcher.run(insert('during-flush-c'));
      await sleep(20);
      assert.equal(await stored('during-flush-a'), 1);
      assert.equal(await stored('during-flush-b'), 0, 'not committed while the flush runs');
      assert.equal(flushes, 1);
      releases[0]();
      await first;
      while (flushes === 1) await sleep(5);
      assert.equal(await stored('during-flush-b'), 1);
      assert.equal(await stored('during-flush-c'), 1);
      assert.equal(transactions.length, 3);
      assert.equal(transactions[1], transactions[2], 'one transaction for both');
      releases[1]();
      await Promise.all([second, third]);
    } finally {
      await s.stop();
    }
  });
});
