// Reusable queries (src/db/reusable-query.ts): compiled once, and on SQLite run straight on the
// connection when no transaction is open on it; inside one they wait their turn through kysely.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { reusableInsert, reusableQuery } from '../../src/db/reusable-query.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const metaByKey = reusableQuery((db, key: string) => db.selectFrom('server_meta').select(['key', 'value']).where('key', '=', key));
const wholeMetaRow = reusableQuery((db, key: string) => db.selectFrom('server_meta').selectAll().where('key', '=', key));

const insertMeta = reusableInsert('server_meta', (q) => q.onConflict((oc) => oc.column('key').doNothing()));

describe('reusable queries', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  test('answer what the same query built by kysely answers, with each call’s values', async () => {
    await s.app.db
      .insertInto('server_meta')
      .values([
        { key: 'rq-a', value: 'one' },
        { key: 'rq-b', value: 'two' },
      ])
      .execute();
    for (const key of ['rq-a', 'rq-b', 'rq-none']) {
      const built = await s.app.db.selectFrom('server_meta').select(['key', 'value']).where('key', '=', key).execute();
      assert.deepEqual(await metaByKey(s.app.db, key), built, key);
    }
    assert.deepEqual(await metaByKey(s.app.db, 'rq-b'), [{ key: 'rq-b', value: 'two' }]);
  });

  test('never see the rows of a transaction still open on the connection, nor of one rolled back', async () => {
    let reads: Promise<unknown>[] = [];
    let readBeforeEnd: unknown[] | undefined;
    await assert.rejects(
      s.app.db.transaction().execute(async (trx) => {
        await trx.insertInto('server_meta').values({ key: 'rq-uncommitted', value: 'x' }).execute();
        // Asked while the transaction holds its write: on SQLite the read shares the connection.
        reads = [metaByKey(s.app.db, 'rq-uncommitted').then((rows) => (readBeforeEnd ??= rows))];
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    await Promise.all(reads);
    assert.deepEqual(readBeforeEnd, [], 'the uncommitted, then rolled back row was never seen');
    assert.deepEqual(await metaByKey(s.app.db, 'rq-uncommitted'), []);
  });

  test('inside a transaction, its own Kysely reads what it wrote', async () => {
    await s.app.db.transaction().execute(async (trx) => {
      await trx.insertInto('server_meta').values({ key: 'rq-own', value: 'mine' }).execute();
      assert.deepEqual(await metaByKey(trx, 'rq-own'), [{ key: 'rq-own', value: 'mine' }]);
    });
    assert.deepEqual(await metaByKey(s.app.db, 'rq-own'), [{ key: 'rq-own', value: 'mine' }]);
  });
  test('a reusable insert writes each row with its own values, answers how many it wrote, and runs in the caller’s transaction', async () => {
    assert.equal(await insertMeta(s.app.db, { key: 'ri-a', value: 'one' }), 1);
    assert.equal(await insertMeta(s.app.db, { key: 'ri-b', value: 'two' }), 1);
    assert.equal(await insertMeta(s.app.db, { key: 'ri-a', value: 'again' }), 0, 'the conflict clause: nothing written');
    // Another set of columns is another statement (here: the columns in another order).
    assert.equal(await insertMeta(s.app.db, { value: 'three', key: 'ri-c' }), 1);
    const rows = await s.app.db.selectFrom('server_meta').select(['key', 'value']).where('key', 'like', 'ri-%').orderBy('key').execute();
    assert.deepEqual(rows, [
      { key: 'ri-a', value: 'one' },
      { key: 'ri-b', value: 'two' },
      { key: 'ri-c', value: 'three' },
    ]);
    await assert.rejects(
      s.app.db.transaction().execute(async (trx) => {
        assert.equal(await insertMeta(trx, { key: 'ri-rolled-back', value: 'x' }), 1);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal((await s.app.db.selectFrom('server_meta').select('key').where('key', '=', 'ri-rolled-back').execute()).length, 0);
  });

  test('answer at once on SQLite outside a transaction (`now`); otherwise `now` leaves it to the awaited query', async () => {
    await s.app.db.insertInto('server_meta').values({ key: 'rq-now', value: 'at once' }).execute();
    const rows = metaByKey.now(s.app.db, 'rq-now');
    if (s.app.dialect === 'sqlite') assert.deepEqual(rows, [{ key: 'rq-now', value: 'at once' }]);
    else assert.equal(rows, undefined, 'Postgres never answers without a round trip');
    await s.app.db.transaction().execute(async (trx) => {
      assert.equal(metaByKey.now(s.app.db, 'rq-now'), undefined, 'a transaction is open on the connection');
      assert.equal(metaByKey.now(trx, 'rq-now'), undefined, 'a transaction’s own Kysely goes through kysely');
      assert.deepEqual(await metaByKey(trx, 'rq-now'), [{ key: 'rq-now', value: 'at once' }]);
    });
  });

  test('rows with a null, a number and a repeated column name come out as kysely’s do', async () => {
    const shaped = reusableQuery((db, key: string) =>
      db
        .selectFrom('server_meta as a')
        .innerJoin('server_meta as b', 'b.key', 'a.key')
        .select(['a.key', 'b.key', sql<number>`42`.as('n'), sql<null>`null`.as('nothing')])
        .where('a.key', '=', key),
    );
    await s.app.db.insertInto('server_meta').values({ key: 'rq-shape', value: 'v' }).execute();
    const built = await s.app.db
      .selectFrom('server_meta as a')
      .innerJoin('server_meta as b', 'b.key', 'a.key')
      .select(['a.key', 'b.key', sql<number>`42`.as('n'), sql<null>`null`.as('nothing')])
      .where('a.key', '=', 'rq-shape')
      .execute();
    assert.deepEqual(await shaped(s.app.db, 'rq-shape'), built);
    assert.deepEqual(built, [{ key: 'rq-shape', n: 42, nothing: null }]);
  });

  test('a column added by a migration while the server runs: the prepared statement gives way, the rows come', async () => {
    await s.app.db.insertInto('server_meta').values({ key: 'rq-schema', value: 'before' }).execute();
    // Prepared (on Postgres: a named statement on the pool's connection) before the change.
    for (let i = 0; i < 3; i++) assert.deepEqual(await wholeMetaRow(s.app.db, 'rq-schema'), [{ key: 'rq-schema', value: 'before' }]);
    await sql`alter table server_meta add column rq_extra text`.execute(s.app.db);
    try {
      for (let i = 0; i < 3; i++) {
        const rows = await wholeMetaRow(s.app.db, 'rq-schema');
        assert.equal(rows.length, 1);
        assert.equal(rows[0].value, 'before');
      }
    } finally {
      await sql`alter table server_meta drop column rq_extra`.execute(s.app.db);
    }
  });
});
