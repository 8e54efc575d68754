// The reactions' settings cache (src/events/settings-cache.ts): a workspace's webhook endpoint filters
// and an inbox's greeting switch are read once and kept while the reaction settings epoch (migration
// 0026) stays the same; a change made anywhere else — a second `svc serve` process, or a statement
// behind the server's back — is honoured by the next mail. Also what a new mail costs inside its
// transaction: the statements it runs (SQLite, where they can be counted on the connection).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type SQLite from 'better-sqlite3';
import { sqliteConnectionOf } from '../../src/db/connection.js';
import { expandOutbox } from '../../src/webhooks/deliveries.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { type ChildServer, spawnServer, startTestServer, type TestServer } from '../helpers/server.js';

describe('reaction settings cache', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let n = 0;
  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(async () => {
    await s.stop();
  });

  const mail = (from = `c${++n}@cust.example`) => deliverMail(s, address, { From: from, 'Message-ID': `<rs-${n}-${Date.now()}@cust.example>` });

  async function deliveriesOf(messageId: string): Promise<number> {
    // The deliveries are made from the outbox as the dispatcher does (at once; it may have done it already).
    await expandOutbox(s.app, { room: 0, load: new Map(), perEndpoint: 32, maxEvents: 256 });
    // On Postgres the server's own dispatcher may hold the event's outbox row (the expansion above
    // skips locked rows): its deliveries are counted once it has committed and the row is gone.
    const inOutbox = () =>
      s.app.db
        .selectFrom('webhook_outbox')
        .innerJoin('events', 'events.seq', 'webhook_outbox.event_seq')
        .select('webhook_outbox.event_seq')
        .where('events.data', 'like', `%${messageId}%`)
        .execute();
    for (let waited = 0; (await inOutbox()).length > 0; waited += 50) {
      assert.ok(waited < 20_000, 'the outbox row of the mail was not expanded within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const rows = await s.app.db
      .selectFrom('webhook_deliveries')
      .innerJoin('events', 'events.seq', 'webhook_deliveries.event_seq')
      .select('events.type')
      .where('events.type', '=', 'message.created')
      .where('events.data', 'like', `%${messageId}%`)
      .execute();
    return rows.length;
  }

  test('an endpoint given the event type behind the cache, as another process would, receives the next mail', async () => {
    const created = await s.request('POST', '/v1/webhooks', {
      token: seed.apiKey,
      body: { url: 'http://127.0.0.1:9/hook', events: ['conversation.updated'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const first = await mail();
    assert.equal(await deliveriesOf(first.message_id), 0, 'the endpoint does not take message.created');
    const second = await mail();
    assert.equal(await deliveriesOf(second.message_id), 0, 'answered from the cache: still none');

    await s.app.db
      .updateTable('webhook_endpoints')
      .set({ events: JSON.stringify(['message.created']) })
      .where('id', '=', created.body.id)
      .execute();
    const third = await mail();
    assert.equal(await deliveriesOf(third.message_id), 1, 'the moved epoch made the outbox read the endpoint again');

    await s.app.db.updateTable('webhook_endpoints').set({ disabled_at: new Date().toISOString() }).where('id', '=', created.body.id).execute();
    const fourth = await mail();
    assert.equal(await deliveriesOf(fourth.message_id), 0, 'a disabled endpoint gets nothing (disabling moves the epoch too)');
    await s.app.db.deleteFrom('webhook_endpoints').where('id', '=', created.body.id).execute();
  });

  test("a member's address changed behind the cache is not made a participant of the next mail", async () => {
    const participants = async (conversationId: string) => {
      const row = await s.app.db.selectFrom('conversations').select('participants').where('id', '=', conversationId).executeTakeFirstOrThrow();
      return (JSON.parse(row.participants ?? '[]') as { address: string }[]).map((p) => p.address).sort();
    };
    const owner = await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow();
    // The first mail reads (and caches) the team's addresses: its Cc is an outside address then.
    const first = await deliverMail(s, address, { From: `t${++n}@cust.example`, Cc: 'later-member@cust.example', 'Message-ID': `<rs-team-${n}@cust.example>` });
    assert.deepEqual(await participants(first.conversation_id), ['later-member@cust.example', `t${n}@cust.example`]);
    await s.app.db.updateTable('people').set({ email: 'later-member@cust.example' }).where('id', '=', seed.ownerId).execute();
    try {
      const second = await deliverMail(s, address, {
        From: `t${++n}@cust.example`,
        Cc: 'later-member@cust.example',
        'Message-ID': `<rs-team-${n}@cust.example>`,
      });
      assert.deepEqual(await participants(second.conversation_id), [`t${n}@cust.example`], "the member's new address is the team's: not a participant");
    } finally {
      await s.app.db.updateTable('people').set({ email: owner.email }).where('id', '=', seed.ownerId).execute();
    }
  });

  test('an SLA policy stored behind the cache applies to the next mail, and its removal to the one after', async () => {
    const sla = async (conversationId: string) =>
      (await s.app.db.selectFrom('conversations').select('sla').where('id', '=', conversationId).executeTakeFirstOrThrow()).sla;
    assert.equal(await sla((await mail()).conversation_id), null, 'no policy: no SLA (and the empty policy list is cached)');
    await s.app.db
      .insertInto('inbox_sla_policies')
      .values({
        inbox_id: seed.inboxId,
        workspace_id: seed.workspaceId,
        priority: '',
        first_response_minutes: 60,
        next_response_minutes: null,
        resolution_minutes: null,
        updated_at: new Date().toISOString(),
      })
      .execute();
    try {
      assert.ok(await sla((await mail()).conversation_id), 'the new policy moved the epoch: the mail has an SLA');
    } finally {
      await s.app.db.deleteFrom('inbox_sla_policies').where('inbox_id', '=', seed.inboxId).execute();
    }
    assert.equal(await sla((await mail()).conversation_id), null, 'removed: no SLA again');
  });

  describe('with a second server process', () => {
    /**
     * A second `svc serve` on the same database switches the greeting, then stops: its job runner
     * polls the shared database and would otherwise take (and remove) the greeting job of the next
     * mail before it is counted here.
     */
    async function switchGreetingElsewhere(enabled: boolean): Promise<void> {
      const second: ChildServer = await spawnServer(s.env);
      try {
        const r = await fetch(`${second.url}/v1/inboxes/${seed.inboxId}/greeting`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ enabled }),
        });
        assert.equal(r.status, 200, await r.text());
      } finally {
        await second.kill();
      }
    }

    test('a greeting switched on by a second server process greets the next mail here', async () => {
      const warm = await mail();
      const jobs = async (conversationId: string) =>
        (await s.app.db.selectFrom('jobs').select('unique_key').where('unique_key', '=', `greeting.send:${conversationId}`).execute()).length;
      assert.equal(await jobs(warm.conversation_id), 0, 'off: no greeting job');
      await switchGreetingElsewhere(true);
      const next = await mail();
      assert.equal(await jobs(next.conversation_id), 1, 'the greeting job is stored with the mail');
      await switchGreetingElsewhere(false);
      const last = await mail();
      assert.equal(await jobs(last.conversation_id), 0, 'switched off again: no job');
    });
  });

  test('a new mail in a new conversation runs at most 12 statements in its transaction (SQLite)', async (t) => {
    const connection = sqliteConnectionOf(s.app.db);
    if (!connection) return t.skip('counts statements on the SQLite connection');
    await mail('known@cust.example');
    // Every statement better-sqlite3 runs between this transaction's begin and its commit.
    const proto = Object.getPrototypeOf(connection.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
    const originals = new Map((['run', 'all', 'get', 'iterate'] as const).map((m) => [m, proto[m]]));
    const seen: string[] = [];
    for (const [name, original] of originals)
      proto[name] = function (this: SQLite.Statement, ...a: unknown[]) {
        seen.push(this.source);
        return original.apply(this, a);
      };
    try {
      await mail('known@cust.example');
    } finally {
      for (const [name, original] of originals) proto[name] = original;
    }
    // The mail's own transaction: the one that inserts its message (a background job's transaction
    // may come first in the window).
    const inserted = seen.findIndex((q) => /^insert into "messages"/i.test(q));
    const begin = seen.slice(0, Math.max(0, inserted)).reduce((found, q, i) => (/^begin/i.test(q) ? i : found), -1);
    const commit = seen.findIndex((q, i) => i > inserted && /^commit/i.test(q));
    assert.ok(inserted > 0 && begin >= 0 && commit > inserted, seen.join('\n'));
    const inside = seen.slice(begin + 1, commit);
    // 12 today: the duplicate check, the sender's contact, the reaction epoch (read once; the team's
    // addresses for the participants, the inbox's SLA policies and away reply switch are cached under
    // it since migration 0066), conversation and message, the visitor-online check, two events, the
    // job, report totals, the mail's digest and id. More is a regression to look at.
    assert.ok(inside.length <= 12, `${inside.length} statements:\n${inside.join('\n')}`);
  });
});
