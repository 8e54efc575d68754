// Multi-row statements of src/db/bulk.ts on the configured dialect.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deleteChosen } from '../../src/db/bulk.js';
import { startTestServer } from '../helpers/server.js';

describe('bulk statements', () => {
  test('deleteChosen deletes at most a batch of the rows the query chooses, and says how many', async () => {
    const s = await startTestServer();
    try {
      const db = s.app.db;
      await db
        .insertInto('server_meta')
        .values([
          ...Array.from({ length: 5 }, (_, i) => ({ key: `bulk-test-old-${i}`, value: 'old' })),
          { key: 'bulk-test-new-0', value: 'new' },
          { key: 'bulk-test-new-1', value: 'new' },
        ])
        .execute();
      const old = () => db.selectFrom('server_meta').select('key').where('key', 'like', 'bulk-test-%').where('value', '=', 'old');
      const left = async () =>
        (await db.selectFrom('server_meta').select('key').where('key', 'like', 'bulk-test-%').orderBy('key').execute()).map((r) => r.key);
      assert.equal(await deleteChosen(db, 'server_meta', 'key', old(), 3), 3);
      assert.equal((await left()).length, 4);
      assert.equal(await deleteChosen(db, 'server_meta', 'key', old(), 3), 2);
      assert.equal(await deleteChosen(db, 'server_meta', 'key', old(), 3), 0);
      assert.deepEqual(await left(), ['bulk-test-new-0', 'bulk-test-new-1'], 'rows the query does not choose stay');
    } finally {
      await s.stop();
    }
  });
});
