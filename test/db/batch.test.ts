import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
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
});
