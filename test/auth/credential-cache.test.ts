// The credentials cache (src/auth/credentials.ts, ctx.credentialCache): a key, session or membership
// checked once is not read again while the credentials epoch stays the same, and every change that
// ends or narrows a credential — made by this server, by a second `svc serve` process on the same
// database, or by a `svc` command — is honoured on the very next request.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { SESSION_IDLE_MS } from '../../src/auth/credentials.js';
import { addMember } from '../../src/members/store.js';
import { DAY, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { postgresUrl } from '../helpers/db.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { type ChildServer, runSvc, spawnServer, startTestServer, type TestServer } from '../helpers/server.js';

type Answer = { status: number; body: any };

/** A request to the second server process. */
async function call(server: ChildServer, method: string, urlPath: string, token: string, body?: unknown): Promise<Answer> {
  const res = await fetch(server.url + urlPath, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('credentials cache across processes', () => {
  let s: TestServer;
  let second: ChildServer;
  before(async () => {
    // The second process runs on the real clock: this one's starts at the real time too, so both
    // agree on which sessions and keys are still alive.
    s = await startTestServer({ clock: new ManualClock(Date.now()) });
    second = await spawnServer(s.env);
  });
  after(async () => {
    await second.kill();
    await s.stop();
  });

  /** Two answers from this server, so that the credential is in its cache before the change. */
  async function warm(token: string, urlPath = '/v1/workspace', headers: Record<string, string> = {}): Promise<void> {
    for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', urlPath, { token, headers })).status, 200);
  }

  async function memberId(seed: Seed, personId: string): Promise<string> {
    const r = await s.request('GET', '/v1/members', { token: seed.ownerToken });
    return r.body.data.find((m: { person_id: string }) => m.person_id === personId).id;
  }

  test('a checked credential is kept in the cache and read again only when the epoch moves', async () => {
    const seed = await seedWorkspace(s.app);
    await warm(seed.apiKey);
    const before = s.app.credentialCache.size;
    assert.ok(before >= 1, 'the key is cached');
    await warm(seed.apiKey);
    assert.equal(s.app.credentialCache.size, before, 'answered from the cache, nothing added');
    await s.app.db
      .updateTable('credentials_epoch')
      .set({ epoch: (eb) => eb('epoch', '+', 1) })
      .execute();
    assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 200);
    assert.equal(s.app.credentialCache.size, 1, 'a moved epoch empties the cache; only this key was read again');
  });

  test('a key revoked by a second server process is refused by the first on its next request', async () => {
    const seed = await seedWorkspace(s.app);
    const { key, secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'to revoke' });
    await warm(secret);
    const revoked = await call(second, 'DELETE', `/v1/api-keys/${key.id}`, seed.ownerToken);
    assert.ok(revoked.status < 300, JSON.stringify(revoked.body));
    const r = await s.request('GET', '/v1/workspace', { token: secret });
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'unauthorized');
    assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 200, 'the other key still works');
  });

  test('a key revoked with `svc api-key revoke` is refused on the next request', async () => {
    const seed = await seedWorkspace(s.app);
    const { key, secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'to revoke by command' });
    await warm(secret);
    const out = await runSvc(['api-key', 'revoke', key.id], { env: s.env });
    assert.equal(out.code, 0, out.stderr);
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 401);
  });

  test('a member removed by a second process is refused on the next request', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await warm(agent.token);
    const removed = await call(second, 'DELETE', `/v1/members/${await memberId(seed, agent.personId)}`, seed.ownerToken);
    assert.ok(removed.status < 300, JSON.stringify(removed.body));
    const r = await s.request('GET', '/v1/workspace', { token: agent.token });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
  });

  test('a role lowered by a second process applies on the next request', async () => {
    const seed = await seedWorkspace(s.app);
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    await warm(admin.token, '/v1/api-keys');
    const changed = await call(second, 'PATCH', `/v1/members/${await memberId(seed, admin.personId)}`, seed.ownerToken, { role: 'agent' });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await s.request('GET', '/v1/api-keys', { token: admin.token })).status, 403, 'agents do not manage keys');
    assert.equal((await s.request('GET', '/v1/workspace', { token: admin.token })).status, 200, 'still a member');
  });

  test('a membership added: the one workspace a session named none for is no longer implied', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await warm(agent.token);
    const other = await seedWorkspace(s.app);
    await addMember(s.app, other.workspaceId, agent.personId, 'agent');
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 400, 'several workspaces and none named');
  });

  test('sessions ended by a second process are refused on the next request', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await warm(agent.token);
    const ended = await call(second, 'DELETE', '/v1/me/sessions', agent.token);
    assert.ok(ended.status < 300, JSON.stringify(ended.body));
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 401);
  });

  test('a workspace deleted by a second process: its keys and members are refused on the next request', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await warm(seed.apiKey);
    await warm(agent.token);
    const name = (await s.request('GET', '/v1/workspace', { token: seed.apiKey })).body.name;
    const deleted = await call(second, 'DELETE', '/v1/workspace', seed.ownerToken, { name });
    assert.equal(deleted.status, 202, JSON.stringify(deleted.body));
    assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 401);
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 403);
  });
});

const onPostgres = Boolean(postgresUrl);
/** The table-valued function of src/db/change-stamp.ts's statement (outside WAL mode only). */
const CHANGE_STAMP = 'pragma_data_version';

/** A connection of its own to the server's database, as another process or `svc` command would have. */
async function otherConnection(env: Record<string, string>): Promise<{ run(sql: string, values: unknown[]): Promise<void>; close(): Promise<void> }> {
  const require = createRequire(import.meta.url);
  if (env.SVC_DATABASE_URL) {
    const pg = require('pg');
    const client = new pg.Client({ connectionString: env.SVC_DATABASE_URL });
    await client.connect();
    return { run: async (sql, values) => void (await client.query(sql, values)), close: () => client.end() };
  }
  const SQLite = require('better-sqlite3');
  const db = new SQLite(path.join(env.SVC_DATA_DIR, 'svc.db'));
  db.pragma('busy_timeout = 10000');
  return {
    run: async (sql, values) => void db.prepare(sql.replace(/\$\d+/g, '?')).run(...values),
    close: async () => db.close(),
  };
}

/**
 * Counts the statements that reach either driver while `work` runs and name one of `tables`:
 * better-sqlite3's statements and pg's client queries (kysely and the pool both end there).
 */
async function statementsNaming(tables: string[], work: () => Promise<void>): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const seen: string[] = [];
  const note = (text: unknown) => {
    const sqlText = typeof text === 'string' ? text : (text as { text?: string } | null)?.text;
    if (sqlText && tables.some((t) => sqlText.includes(t === CHANGE_STAMP ? t : `"${t}"`))) seen.push(sqlText);
  };
  const SQLite = require('better-sqlite3');
  const probe = new SQLite(':memory:');
  const statementProto = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const pg = require('pg');
  const patched: [object, string, (...args: unknown[]) => unknown][] = [];
  for (const name of ['all', 'get', 'run', 'iterate']) {
    const original = statementProto[name];
    patched.push([statementProto, name, original]);
    statementProto[name] = function (this: { source: string }, ...args: unknown[]) {
      note(this.source);
      return original.apply(this, args);
    };
  }
  const query = pg.Client.prototype.query;
  patched.push([pg.Client.prototype, 'query', query]);
  pg.Client.prototype.query = function (this: unknown, config: unknown, ...args: unknown[]) {
    note(config);
    return query.call(this, config, ...args);
  };
  try {
    await work();
  } finally {
    for (const [target, name, original] of patched) (target as Record<string, unknown>)[name] = original;
  }
  return seen;
}

describe('credentials cache: what a request reads', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    // The retention run due at start deletes expired sessions: one that expired while the test ran
    // would move the epoch and empty the cache mid-test.
    await s.app.jobs.stop();
  });
  after(() => s.stop());

  test('GET /v1/workspace with a cached key: on SQLite no statement (the wal-index header says nothing changed), on Postgres one, the epoch with the workspace row', async () => {
    const seed = await seedWorkspace(s.app);
    for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 200);
    let answer: Answer | undefined;
    const statements = await statementsNaming(['credentials_epoch', 'workspaces', 'api_keys', CHANGE_STAMP], async () => {
      answer = await s.request('GET', '/v1/workspace', { token: seed.apiKey });
    });
    assert.equal(answer?.status, 200);
    assert.equal(answer?.body.id, seed.workspaceId);
    // SQLite: nothing changed since the last request, so the epoch and the workspace row read then still hold.
    assert.equal(statements.length, onPostgres ? 1 : 0, statements.join('\n'));
    if (onPostgres) assert.match(statements[0], /credentials_epoch/);
  });

  test('a request with a cached session reads as little: no statement on SQLite, one with the workspace row on Postgres', async () => {
    const seed = await seedWorkspace(s.app);
    // Implied (the person's only workspace) and named, in the header or the query (a browser's WebSocket).
    const ways: { path: string; headers?: Record<string, string> }[] = [
      { path: '/v1/workspace' },
      { path: '/v1/workspace', headers: { 'svc-workspace': seed.workspaceId } },
      { path: `/v1/workspace?workspace=${seed.workspaceId}` },
    ];
    for (const way of ways) {
      for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', way.path, { token: seed.ownerToken, headers: way.headers })).status, 200);
      let answer: Answer | undefined;
      const statements = await statementsNaming(['credentials_epoch', 'workspaces', 'sessions', 'memberships', CHANGE_STAMP], async () => {
        answer = await s.request('GET', way.path, { token: seed.ownerToken, headers: way.headers });
      });
      assert.equal(answer?.status, 200, way.path);
      assert.equal(answer?.body.id, seed.workspaceId);
      assert.equal(statements.length, onPostgres ? 1 : 0, `${JSON.stringify(way)}\n${statements.join('\n')}`);
      if (onPostgres) assert.match(statements[0], /credentials_epoch/);
    }
  });

  test('the workspace row that comes with the epoch is read again once this process changed a row', async () => {
    const seed = await seedWorkspace(s.app);
    for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 200);
    // Changed through the server's own connection, without going through its services: the epoch does not move.
    await s.app.db.updateTable('workspaces').set({ name: 'Renamed elsewhere', retention_days: 9 }).where('id', '=', seed.workspaceId).execute();
    const r = await s.request('GET', '/v1/workspace', { token: seed.apiKey });
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'Renamed elsewhere');
    assert.equal(r.body.retention_days, 9);
  });

  test('a change committed by another connection is seen on the next request: workspace renamed, then the key revoked', async () => {
    const seed = await seedWorkspace(s.app);
    const other = await otherConnection(s.env);
    try {
      for (let i = 0; i < 3; i++) assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 200);
      await other.run('update workspaces set name = $1 where id = $2', ['Renamed by another connection', seed.workspaceId]);
      const renamed = await s.request('GET', '/v1/workspace', { token: seed.apiKey });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, 'Renamed by another connection');
      for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', '/v1/workspace', { token: seed.apiKey })).status, 200);
      await other.run('update api_keys set revoked_at = $1 where workspace_id = $2', ['2020-01-01T00:00:00.000Z', seed.workspaceId]);
      const revoked = await s.request('GET', '/v1/workspace', { token: seed.apiKey });
      assert.equal(revoked.status, 401);
      assert.equal(revoked.body.error.code, 'unauthorized');
    } finally {
      await other.close();
    }
  });

  test('a session’s membership brings its workspace row the same way', async () => {
    const seed = await seedWorkspace(s.app);
    for (let i = 0; i < 2; i++) assert.equal((await s.request('GET', '/v1/workspace', { token: seed.ownerToken })).status, 200);
    await s.app.db.updateTable('workspaces').set({ name: 'Seen by members' }).where('id', '=', seed.workspaceId).execute();
    const r = await s.request('GET', '/v1/workspace', { token: seed.ownerToken });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, seed.workspaceId);
    assert.equal(r.body.name, 'Seen by members');
  });
});

describe('credentials cache and the clock', () => {
  let s: TestServer;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock('2026-05-01T09:00:00Z');
    s = await startTestServer({ clock });
  });
  after(() => s.stop());

  test('a cached key is refused once its expiry passes', async () => {
    const seed = await seedWorkspace(s.app);
    const { secret } = await createApiKey(s.app, {
      workspaceId: seed.workspaceId,
      name: 'short',
      expiresAt: new Date(clock.now().getTime() + DAY).toISOString(),
    });
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 200);
    clock.advance(DAY - MINUTE);
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 200);
    clock.advance(2 * MINUTE);
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 401);
  });

  test('a cached session is refused once it has been idle too long, and slides while used', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 200);
    clock.advance(SESSION_IDLE_MS - MINUTE);
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 200, 'used before it ends: slides forward');
    const row = await s.app.db.selectFrom('sessions').select('expires_at').where('person_id', '=', agent.personId).executeTakeFirstOrThrow();
    assert.equal(row.expires_at, new Date(clock.now().getTime() + SESSION_IDLE_MS).toISOString(), 'the slide is written');
    clock.advance(SESSION_IDLE_MS + MINUTE);
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 401);
  });
});
