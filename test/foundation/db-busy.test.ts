// A database with no connection to spare answers 503 busy with Retry-After, not an internal error:
// on Postgres every connection of the pool is taken (a pool of one, held by the test) for longer
// than SVC_DATABASE_WAIT_MS; on SQLite another process holds the write lock past busy_timeout (SVC_DATABASE_WAIT_MS).
// Nothing is changed by the refused request, and the next one, once the database is free, succeeds.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const postgres = Boolean(process.env.SVC_TEST_DATABASE_URL);

describe('database busy', () => {
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    s = await startTestServer({ env: { SVC_DATABASE_POOL_SIZE: '1', SVC_DATABASE_WAIT_MS: '300' } });
    seed = await seedWorkspace(s.app);
    // The job runner would take the one connection between the test's steps.
    await s.app.jobs.stop();
  });
  after(async () => {
    await s?.stop();
  });

  const contactCount = async () =>
    Number(
      (
        await s.app.db
          .selectFrom('contacts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('workspace_id', '=', seed.workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  const assertBusy = (r: { status: number; body: any; headers: Headers }) => {
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal(r.body.error.code, 'busy');
    assert.equal(r.body.error.retry_after, 1);
    assert.match(r.body.error.message, /try again/);
    assert.ok(!s.logs.some((l) => l.msg === 'request failed'), 'not logged as an internal error');
  };

  test('Postgres: every pooled connection taken past the wait → 503 busy, then 200 once one is free', { skip: !postgres }, async () => {
    const before = await contactCount();
    await s.app.db.connection().execute(async () => {
      assertBusy(await s.request('GET', '/v1/conversations?limit=10', { token: seed.ownerToken }));
      assertBusy(await s.request('POST', '/v1/contacts', { token: seed.ownerToken, body: { emails: ['busy@example.com'], name: 'Busy' } }));
    });
    assert.equal(await contactCount(), before, 'the refused write changed nothing');
    assert.equal((await s.request('GET', '/v1/conversations?limit=10', { token: seed.ownerToken })).status, 200);
  });

  test('SQLite: the write lock held by another process past busy_timeout (SVC_DATABASE_WAIT_MS) → 503 busy, then the write succeeds', {
    skip: postgres,
  }, async () => {
    const before = await contactCount();
    const other = new SQLite(path.join(s.env.SVC_DATA_DIR, 'svc.db'));
    try {
      other.exec('begin immediate');
      assertBusy(await s.request('POST', '/v1/contacts', { token: seed.ownerToken, body: { emails: ['busy@example.com'], name: 'Busy' } }));
      other.exec('rollback');
    } finally {
      other.close();
    }
    assert.equal(await contactCount(), before, 'the refused write changed nothing');
    assert.equal((await s.request('POST', '/v1/contacts', { token: seed.ownerToken, body: { emails: ['busy@example.com'], name: 'Busy' } })).status, 201);
  });
});
