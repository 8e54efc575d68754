// LIMIT and OFFSET on SQLite (src/db/sqlite-dialect.ts): kysely's `.limit(n)` and `.offset(n)` are
// written as `cast(? as integer)`, which SQLite does not plan by value (a bare `?` there made every
// run prepare the statement again); the rows are the same on both dialects, whatever the values.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { reusableQuery } from '../../src/db/reusable-query.js';
import { postgresUrl } from '../helpers/db.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const pageOfMeta = reusableQuery((db, prefix: string, limit: number, offset: number) =>
  db.selectFrom('server_meta').select('key').where('key', 'like', prefix).orderBy('key').limit(limit).offset(offset),
);

describe('LIMIT and OFFSET values', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await s.app.db
      .insertInto('server_meta')
      .values(['a', 'b', 'c', 'd', 'e'].map((k) => ({ key: `lim-${k}`, value: k })))
      .execute();
  });
  after(() => s.stop());

  test('on SQLite the values are cast, not bare parameters', { skip: postgresUrl ? 'SQLite only' : false }, () => {
    const { sql, parameters } = s.app.db.selectFrom('server_meta').select('key').limit(2).offset(1).compile();
    assert.match(sql, /limit cast\(\? as integer\) offset cast\(\? as integer\)$/);
    assert.deepEqual(parameters, [2, 1]);
  });

  test('limits and offsets select the same rows as before, through kysely and a reusable query', async () => {
    const keys = (rows: { key: string }[]) => rows.map((r) => r.key);
    const built = (limit: number, offset: number) =>
      s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'lim-%').orderBy('key').limit(limit).offset(offset).execute();
    assert.deepEqual(keys(await built(2, 0)), ['lim-a', 'lim-b']);
    assert.deepEqual(keys(await built(2, 3)), ['lim-d', 'lim-e']);
    assert.deepEqual(keys(await built(10, 4)), ['lim-e']);
    assert.deepEqual(keys(await built(0, 0)), []);
    // One compiled statement, many values.
    for (const [limit, offset] of [
      [1, 0],
      [3, 1],
      [5, 5],
    ] as const) {
      assert.deepEqual(keys(await pageOfMeta(s.app.db, 'lim-%', limit, offset)), keys(await built(limit, offset)), `${limit}/${offset}`);
    }
    const first = await s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'lim-%').orderBy('key', 'desc').executeTakeFirst();
    assert.equal(first?.key, 'lim-e');
  });
});
