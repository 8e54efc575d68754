// The credentials epoch (src/auth/credentials.ts) and the reaction settings epoch
// (src/events/settings-cache.ts) move when a watched row really changed, and only then: a statement
// that changes no row (a delete or update matching nothing, a write of the value a row already has)
// leaves them alone, so that the caches of every process are not emptied for nothing (migration
// 0027). Hand-typed SQL, as an operator or another program would run it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type RawBuilder, sql } from 'kysely';
import { createApiKey } from '../../src/api-keys/service.js';
import { isPostgres } from '../../src/db/dialect.js';
import type { Db } from '../../src/db/schema.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Epoch = 'credentials_epoch' | 'reaction_settings_epoch';

const NOW = '2030-01-01T00:00:00.000Z';

describe('epoch triggers', () => {
  let s: TestServer;
  let db: Db;
  before(async () => {
    s = await startTestServer();
    // Nothing in the background writes watched rows meanwhile (the retention run due at start).
    await s.app.jobs.stop();
    db = s.app.db;
  });
  after(() => s.stop());

  async function epochOf(name: Epoch): Promise<number> {
    const r = await sql<{ epoch: number }>`select epoch from ${sql.table(name)} where id = 1`.execute(db);
    return Number(r.rows[0].epoch);
  }

  /** How far each statement (run on its own, in autocommit) moved the epoch. */
  async function moved(name: Epoch, statement: RawBuilder<unknown>): Promise<number> {
    const before = await epochOf(name);
    await statement.execute(db);
    return (await epochOf(name)) - before;
  }

  /** Rows of every watched table, for statements that find one (and for "the value it already has"). */
  async function rows() {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const { key } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'watched' });
    const session = await db.selectFrom('sessions').select('id').where('person_id', '=', agent.personId).executeTakeFirstOrThrow();
    const membership = await db.selectFrom('memberships').select('id').where('person_id', '=', agent.personId).executeTakeFirstOrThrow();
    const endpointId = `wh_${key.id}`;
    await sql`insert into webhook_endpoints (id, workspace_id, url, events, inbox_id, include_notes, secret_sealed, created_at, updated_at)
      values (${endpointId}, ${seed.workspaceId}, 'https://hooks.example/in', '["message.created"]', null, 0, 'sealed', ${NOW}, ${NOW})`.execute(db);
    await sql`insert into inbox_greetings (inbox_id, workspace_id, enabled, text_en, text_tr, updated_at)
      values (${seed.inboxId}, ${seed.workspaceId}, 0, 'Hello', 'Merhaba', ${NOW})`.execute(db);
    return { seed, agent, keyId: key.id, sessionId: session.id, membershipId: membership.id, endpointId };
  }

  test('statements that change no row leave both epochs where they were', async () => {
    const r = await rows();
    const none = 'none-such';
    const unchanged: [Epoch, string, RawBuilder<unknown>][] = [
      // Matching nothing.
      ['credentials_epoch', 'retention: no expired session', sql`delete from sessions where expires_at < ${'1970-01-01T00:00:00.000Z'}`],
      ['credentials_epoch', 'delete api_keys', sql`delete from api_keys where id = ${none}`],
      [
        'credentials_epoch',
        'update api_keys',
        sql`update api_keys set revoked_at = ${NOW}, expires_at = ${NOW}, scopes = '[]', inbox_ids = '[]', secret_hash = 'x' where id = ${none}`,
      ],
      ['credentials_epoch', 'update sessions', sql`update sessions set expires_at = ${'1970-01-01T00:00:00.000Z'}, token_hash = 'x' where id = ${none}`],
      ['credentials_epoch', 'insert memberships', sql`insert into memberships select * from memberships where id = ${none}`],
      ['credentials_epoch', 'update memberships', sql`update memberships set role = 'owner', inbox_ids = '[]' where person_id = ${none}`],
      ['credentials_epoch', 'delete memberships', sql`delete from memberships where person_id = ${none}`],
      ['credentials_epoch', 'update people', sql`update people set email = 'x@example.com' where id = ${none}`],
      ['credentials_epoch', 'delete people', sql`delete from people where id = ${none}`],
      ['credentials_epoch', 'update workspaces', sql`update workspaces set deleted_at = ${NOW} where id = ${none}`],
      ['credentials_epoch', 'delete workspaces', sql`delete from workspaces where id = ${none}`],
      ['reaction_settings_epoch', 'insert webhook_endpoints', sql`insert into webhook_endpoints select * from webhook_endpoints where id = ${none}`],
      ['reaction_settings_epoch', 'update webhook_endpoints', sql`update webhook_endpoints set events = '[]', include_notes = 1 where id = ${none}`],
      ['reaction_settings_epoch', 'delete webhook_endpoints', sql`delete from webhook_endpoints where id = ${none}`],
      ['reaction_settings_epoch', 'insert inbox_greetings', sql`insert into inbox_greetings select * from inbox_greetings where inbox_id = ${none}`],
      ['reaction_settings_epoch', 'update inbox_greetings', sql`update inbox_greetings set enabled = 1 where inbox_id = ${none}`],
      ['reaction_settings_epoch', 'delete inbox_greetings', sql`delete from inbox_greetings where inbox_id = ${none}`],
      // Matching a row, writing the values it already has.
      [
        'credentials_epoch',
        'api key rewritten as it is',
        sql`update api_keys set revoked_at = revoked_at, expires_at = expires_at, scopes = scopes, inbox_ids = inbox_ids, secret_hash = secret_hash where id = ${r.keyId}`,
      ],
      ['credentials_epoch', 'session rewritten as it is', sql`update sessions set token_hash = token_hash, person_id = person_id where id = ${r.sessionId}`],
      ['credentials_epoch', 'membership rewritten as it is', sql`update memberships set role = role, inbox_ids = inbox_ids where id = ${r.membershipId}`],
      ['credentials_epoch', 'person rewritten as it is', sql`update people set email = email where id = ${r.agent.personId}`],
      ['credentials_epoch', 'workspace rewritten as it is', sql`update workspaces set deleted_at = deleted_at where id = ${r.seed.workspaceId}`],
      [
        'reaction_settings_epoch',
        'endpoint rewritten as it is',
        sql`update webhook_endpoints set events = events, include_notes = include_notes, inbox_id = inbox_id where id = ${r.endpointId}`,
      ],
      ['reaction_settings_epoch', 'greeting rewritten as it is', sql`update inbox_greetings set enabled = enabled where inbox_id = ${r.seed.inboxId}`],
    ];
    for (const [epoch, what, statement] of unchanged) assert.equal(await moved(epoch, statement), 0, what);
  });

  test('a statement that changes one watched row moves its epoch', async () => {
    const r = await rows();
    const bareWorkspace = `ws_bare_${r.keyId}`;
    const barePerson = `p_bare_${r.keyId}`;
    const later = '2099-01-01T00:00:00.000Z';
    const changes: [Epoch, string, RawBuilder<unknown>][] = [
      ['credentials_epoch', 'key limited to an inbox', sql`update api_keys set inbox_ids = ${JSON.stringify([r.seed.inboxId])} where id = ${r.keyId}`],
      ['credentials_epoch', 'key revoked', sql`update api_keys set revoked_at = ${NOW} where id = ${r.keyId}`],
      ['credentials_epoch', 'key deleted', sql`delete from api_keys where id = ${r.keyId}`],
      ['credentials_epoch', 'session cut short', sql`update sessions set expires_at = ${'2000-01-01T00:00:00.000Z'} where id = ${r.sessionId}`],
      ['credentials_epoch', 'session deleted', sql`delete from sessions where id = ${r.sessionId}`],
      ['credentials_epoch', 'membership limited', sql`update memberships set inbox_ids = ${JSON.stringify([r.seed.inboxId])} where id = ${r.membershipId}`],
      ['credentials_epoch', 'membership role changed', sql`update memberships set role = 'admin' where id = ${r.membershipId}`],
      ['credentials_epoch', 'membership deleted', sql`delete from memberships where id = ${r.membershipId}`],
      [
        'credentials_epoch',
        'membership added',
        sql`insert into memberships (id, workspace_id, person_id, role, created_at) values (${`mem_${r.keyId}`}, ${r.seed.workspaceId}, ${r.agent.personId}, 'agent', ${NOW})`,
      ],
      ['credentials_epoch', 'address changed', sql`update people set email = ${`moved-${r.keyId}@example.com`} where id = ${r.agent.personId}`],
      ['credentials_epoch', 'workspace marked deleted', sql`update workspaces set deleted_at = ${NOW} where id = ${r.seed.workspaceId}`],
      [
        'reaction_settings_epoch',
        'endpoint given other events',
        sql`update webhook_endpoints set events = '["conversation.created"]' where id = ${r.endpointId}`,
      ],
      ['reaction_settings_epoch', 'endpoint deleted', sql`delete from webhook_endpoints where id = ${r.endpointId}`],
      ['reaction_settings_epoch', 'greeting switched on', sql`update inbox_greetings set enabled = 1 where inbox_id = ${r.seed.inboxId}`],
      ['reaction_settings_epoch', 'greeting deleted', sql`delete from inbox_greetings where inbox_id = ${r.seed.inboxId}`],
      [
        'reaction_settings_epoch',
        'greeting added',
        sql`insert into inbox_greetings (inbox_id, workspace_id, enabled, text_en, text_tr, updated_at) values (${r.seed.inboxId}, ${r.seed.workspaceId}, 1, 'Hi', 'Selam', ${NOW})`,
      ],
    ];
    for (const [epoch, what, statement] of changes) assert.equal(await moved(epoch, statement), 1, what);

    // Rows with nothing hanging on them, so that deleting them deletes nothing else that is watched.
    await sql`insert into workspaces (id, name, origin, created_at, updated_at) values (${bareWorkspace}, 'bare', 'bootstrap', ${NOW}, ${NOW})`.execute(db);
    await sql`insert into people (id, email, locale, created_at, updated_at) values (${barePerson}, ${`bare-${r.keyId}@example.com`}, 'en', ${NOW}, ${NOW})`.execute(
      db,
    );
    assert.equal(await moved('credentials_epoch', sql`delete from workspaces where id = ${bareWorkspace}`), 1, 'workspace deleted');
    assert.equal(await moved('credentials_epoch', sql`delete from people where id = ${barePerson}`), 1, 'person deleted');

    // A session's sliding expiry (later, not sooner) is not a change that narrows anything.
    const agent = await addPerson(s.app, r.seed.workspaceId, 'agent');
    assert.equal(
      await moved('credentials_epoch', sql`update sessions set expires_at = ${later}, last_used_at = ${NOW} where person_id = ${agent.personId}`),
      0,
    );
  });

  test('many rows changed in one statement: the epoch moves (on Postgres once per transaction)', async () => {
    const seed = await seedWorkspace(s.app);
    for (let i = 0; i < 20; i++) await createApiKey(s.app, { workspaceId: seed.workspaceId, name: `k${i}` });
    const n = await moved('credentials_epoch', sql`delete from api_keys where workspace_id = ${seed.workspaceId}`);
    if (isPostgres(db)) assert.equal(n, 1);
    else assert.ok(n >= 1, String(n));

    if (!isPostgres(db)) return;
    // Two changes in one transaction move it once; a change undone with its savepoint is undone
    // with its mark, so the transaction's later change still moves it.
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const before = await epochOf('credentials_epoch');
    await db.transaction().execute(async (trx) => {
      await sql`update memberships set role = 'admin' where person_id = ${agent.personId}`.execute(trx);
      await sql`delete from sessions where person_id = ${agent.personId}`.execute(trx);
    });
    assert.equal((await epochOf('credentials_epoch')) - before, 1, 'one transaction, one move');
    const middle = await epochOf('credentials_epoch');
    await db.transaction().execute(async (trx) => {
      await sql`savepoint undone`.execute(trx);
      await sql`update memberships set role = 'agent' where person_id = ${agent.personId}`.execute(trx);
      await sql`rollback to savepoint undone`.execute(trx);
      await sql`update memberships set inbox_ids = ${JSON.stringify([seed.inboxId])} where person_id = ${agent.personId}`.execute(trx);
    });
    assert.equal((await epochOf('credentials_epoch')) - middle, 1, 'the change after the rolled-back savepoint moved it');
  });

  test("what a new mail's transaction caches moves the reaction settings epoch: the team's addresses, SLA policies, the away reply switch (0066)", async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const channel = await seedEmailChannel(s.app, seed);
    const policy = (minutes: number) =>
      sql`insert into inbox_sla_policies (inbox_id, workspace_id, priority, first_response_minutes, next_response_minutes, resolution_minutes, updated_at)
        values (${seed.inboxId}, ${seed.workspaceId}, '', ${minutes}, null, null, ${NOW})`;
    const steps: [string, RawBuilder<unknown>, number][] = [
      ['membership role changed (not read by a mail)', sql`update memberships set role = 'admin' where person_id = ${agent.personId}`, 0],
      ['member address rewritten as it is', sql`update people set email = email where id = ${agent.personId}`, 0],
      ['member address changed', sql`update people set email = ${`moved-${agent.personId}@example.com`} where id = ${agent.personId}`, 1],
      ['membership deleted', sql`delete from memberships where person_id = ${agent.personId} and workspace_id = ${seed.workspaceId}`, 1],
      ['channel forwarding address set', sql`update channels set forwarding_address = ${`fw-${channel.id}@example.com`} where id = ${channel.id}`, 1],
      ['channel rewritten as it is', sql`update channels set address = address, from_address = from_address where id = ${channel.id}`, 0],
      ['SLA policy added', policy(60), 1],
      ['SLA policy changed', sql`update inbox_sla_policies set first_response_minutes = 30 where inbox_id = ${seed.inboxId}`, 1],
      ['SLA policy deleted', sql`delete from inbox_sla_policies where inbox_id = ${seed.inboxId}`, 1],
      [
        'away reply added',
        sql`insert into inbox_away_replies (inbox_id, workspace_id, enabled, text_en, text_tr, updated_at) values (${seed.inboxId}, ${seed.workspaceId}, 0, 'Away', 'Yok', ${NOW})`,
        1,
      ],
      ['away reply text changed (not cached)', sql`update inbox_away_replies set text_en = 'Closed' where inbox_id = ${seed.inboxId}`, 0],
      ['away reply switched on', sql`update inbox_away_replies set enabled = 1 where inbox_id = ${seed.inboxId}`, 1],
      ['away reply deleted', sql`delete from inbox_away_replies where inbox_id = ${seed.inboxId}`, 1],
      ['channel deleted', sql`delete from channels where id = ${channel.id}`, 1],
    ];
    for (const [what, statement, expected] of steps) assert.equal(await moved('reaction_settings_epoch', statement), expected, what);
  });
});
