// The dispatcher's statements below the HTTP level (no dispatcher running): each claim takes due work
// once and leases it, busy endpoints are left alone, on Postgres a claim skips rows another claimer
// holds instead of waiting for them, and a batch of results is written with a few statements
// however many attempts failed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { keyAccess, SCOPES } from '../../src/auth/access.js';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { isPostgres } from '../../src/db/dialect.js';
import { checkResult, createMigrator } from '../../src/db/migrator.js';
import { pruneEvents } from '../../src/events/service.js';
import { DAY, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { claimDeliveries, expandOutbox, LEASE_MS, RETRY_JITTER, RETRY_SCHEDULE_MS, writeResults } from '../../src/webhooks/deliveries.js';
import { createEndpoint, deleteWorkspaceWebhooks } from '../../src/webhooks/service.js';
import { emitMessage } from '../helpers/events.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { type TestEnv, testEnv } from '../helpers/server.js';

describe('webhook dispatcher statements', () => {
  let te: TestEnv;
  let app: App;
  let clock: ManualClock;
  let seed: Seed;

  before(async () => {
    te = await testEnv({ SVC_WEBHOOK_ALLOW_PRIVATE: '1' });
    clock = new ManualClock('2030-01-01T00:00:00Z');
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }), clock });
    checkResult(await createMigrator(app.db).migrateToLatest());
    seed = await seedWorkspace(app);
  });
  after(async () => {
    await app.close();
    await te.cleanup();
  });

  async function endpointWithDeliveries(count: number): Promise<string> {
    const access = keyAccess(seed.workspaceId, 'key_claim', [...SCOPES], null);
    const { endpoint } = await createEndpoint(app, access, { url: `http://127.0.0.1:9/${Math.random().toString(36).slice(2)}`, events: ['message.created'] });
    await app.db.updateTable('webhook_endpoints').set({ disabled_at: clock.now().toISOString() }).where('id', '!=', endpoint.id).execute();
    for (let i = 0; i < count; i++) await emitMessage(app, seed.workspaceId, seed.inboxId);
    await makeDeliveries();
    return endpoint.id;
  }

  /** What the dispatcher does first: the outbox's events become due delivery rows. */
  async function makeDeliveries(): Promise<void> {
    while ((await expandOutbox(app, { room: 0, load: new Map(), perEndpoint: 32, maxEvents: 256 })).more);
  }

  test('an event is one outbox row; the dispatcher makes its deliveries once: claimed within the room, the rest due, none for a deleted endpoint, failed for one disabled since', async () => {
    const access = keyAccess(seed.workspaceId, 'key_outbox', [...SCOPES], null);
    await app.db.updateTable('webhook_endpoints').set({ disabled_at: clock.now().toISOString() }).where('disabled_at', 'is', null).execute();
    clock.advance(1000);
    const make = async (events = ['message.created']) =>
      (await createEndpoint(app, access, { url: `http://127.0.0.1:9/${Math.random().toString(36).slice(2)}`, events })).endpoint.id;
    const [sent, busy, deleted, disabledLater] = [await make(), await make(), await make(), await make()];
    await make(['conversation.created']); // takes none of these events
    const disabledBefore = await make();
    await app.db.updateTable('webhook_endpoints').set({ disabled_at: clock.now().toISOString() }).where('id', '=', disabledBefore).execute();
    clock.advance(1000);
    for (let i = 0; i < 3; i++) await emitMessage(app, seed.workspaceId, seed.inboxId);
    const outbox = await app.db.selectFrom('webhook_outbox').selectAll().orderBy('event_seq').execute();
    assert.equal(outbox.length, 3, 'one outbox row per event');
    for (const row of outbox) {
      assert.deepEqual(row.endpoint_ids.split(',').sort(), [sent, busy, deleted, disabledLater].sort(), 'enabled endpoints that take the type');
      assert.equal(Number(row.endpoint_count), 4);
    }
    const seqs = outbox.map((o) => Number(o.event_seq));
    const deliveriesOf = (seq: number) => app.db.selectFrom('webhook_deliveries').selectAll().where('event_seq', '=', seq).orderBy('endpoint_id').execute();
    assert.equal((await deliveriesOf(seqs[0]!)).length, 0, 'no delivery row before the dispatcher makes them');

    await app.db.deleteFrom('webhook_endpoints').where('id', '=', deleted).execute();
    clock.advance(1000);
    await app.db.updateTable('webhook_endpoints').set({ disabled_at: clock.now().toISOString() }).where('id', '=', disabledLater).execute();
    const now = clock.now().toISOString();
    const lease = new Date(clock.now().getTime() + LEASE_MS).toISOString();
    const first = await expandOutbox(app, { room: 2, load: new Map([[busy, 32]]), perEndpoint: 32, maxEvents: 64 });
    assert.equal(first.more, true, 'events are taken whole, as many as the room holds');
    assert.deepEqual(
      first.claimed.map((c) => [c.event_seq, c.endpoint_id, c.attempts, c.manual]),
      [[seqs[0], sent, 0, false]],
    );
    assert.equal(first.failed, 1);
    const made = new Map((await deliveriesOf(seqs[0]!)).map((d) => [d.endpoint_id, d]));
    assert.deepEqual([...made.keys()].sort(), [sent, busy, disabledLater].sort());
    assert.deepEqual([made.get(sent)!.status, made.get(sent)!.lease_until, made.get(sent)!.next_attempt_at], ['pending', lease, lease]);
    assert.deepEqual(
      [made.get(busy)!.status, made.get(busy)!.lease_until, made.get(busy)!.next_attempt_at],
      ['pending', null, outbox[0]!.created_at],
      'due since recorded',
    );
    assert.deepEqual([made.get(disabledLater)!.status, made.get(disabledLater)!.finished_at], ['failed', now]);
    assert.equal(made.get(sent)!.created_at, outbox[0]!.created_at);
    assert.equal((await app.db.selectFrom('webhook_outbox').select('event_seq').execute()).length, 2);

    const rest = await expandOutbox(app, { room: 0, load: new Map(), perEndpoint: 32, maxEvents: 64 });
    assert.deepEqual([rest.claimed.length, rest.failed, rest.more], [0, 2, false]);
    assert.equal((await app.db.selectFrom('webhook_outbox').select('event_seq').execute()).length, 0);
    const again = await expandOutbox(app, { room: 10, load: new Map(), perEndpoint: 32, maxEvents: 64 });
    assert.deepEqual([again.claimed.length, again.more], [0, false]);
    for (const seq of seqs.slice(1)) assert.equal((await deliveriesOf(seq)).length, 3, 'made once');
    await app.db.deleteFrom('webhook_deliveries').where('event_seq', 'in', seqs).execute();
  });

  test('Postgres: making deliveries skips outbox rows another dispatcher holds instead of waiting for it', async (t) => {
    if (!isPostgres(app.db)) return t.skip('Postgres only (set SVC_TEST_DATABASE_URL)');
    const endpointId = await endpointWithDeliveries(0);
    for (let i = 0; i < 3; i++) await emitMessage(app, seed.workspaceId, seed.inboxId);
    const seqs = (await app.db.selectFrom('webhook_outbox').select('event_seq').orderBy('event_seq').execute()).map((r) => Number(r.event_seq));
    assert.equal(seqs.length, 3);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = app.db.transaction().execute(async (trx) => {
      await sql`select event_seq from webhook_outbox where event_seq in (${sql.join(seqs.slice(0, 2))}) for update`.execute(trx);
      locked();
      await released;
    });
    await isLocked;
    try {
      const taking = expandOutbox(app, { room: 10, load: new Map(), perEndpoint: 32, maxEvents: 64 });
      const outcome = await Promise.race([taking, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 20_000).unref())]);
      assert.notEqual(outcome, 'waited', 'making deliveries waited for the other transaction');
      assert.deepEqual(
        (outcome as { claimed: { event_seq: number; endpoint_id: string }[] }).claimed.map((c) => [c.event_seq, c.endpoint_id]),
        [[seqs[2], endpointId]],
      );
    } finally {
      release();
      await holder;
    }
    const rest = await expandOutbox(app, { room: 10, load: new Map(), perEndpoint: 32, maxEvents: 64 });
    assert.deepEqual(
      rest.claimed.map((c) => c.event_seq).sort((a, b) => a - b),
      seqs.slice(0, 2),
    );
    await app.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpointId).execute();
  });

  test('due deliveries are taken once, leased, and moved out of the due order; busy endpoints wait', async () => {
    const endpointId = await endpointWithDeliveries(6);
    const none = await claimDeliveries(app, { limit: 10, busyEndpoints: [endpointId, 'wh_other'], manual: false });
    assert.equal(none.length, 0, 'a busy endpoint is skipped');

    const first = await claimDeliveries(app, { limit: 4, busyEndpoints: ['wh_other'], manual: false });
    assert.equal(first.length, 4);
    const second = await claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: false });
    assert.equal(second.length, 2);
    assert.equal((await claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: false })).length, 0);
    const seqs = [...first, ...second].map((d) => d.event_seq);
    assert.equal(new Set(seqs).size, 6, 'no delivery is claimed twice');
    for (const d of [...first, ...second]) {
      assert.equal(typeof d.event_seq, 'number');
      assert.equal(d.endpoint_id, endpointId);
      assert.equal(d.workspace_id, seed.workspaceId);
      assert.match(d.event_id, /^evt_/);
      assert.equal(d.attempts, 0);
      assert.equal(d.manual, false);
    }
    const lease = new Date(clock.now().getTime() + LEASE_MS).toISOString();
    const rows = await app.db.selectFrom('webhook_deliveries').select(['lease_until', 'next_attempt_at']).where('endpoint_id', '=', endpointId).execute();
    for (const r of rows) {
      assert.equal(r.lease_until, lease);
      assert.equal(r.next_attempt_at, lease, 'due again when the lease runs out');
    }

    // A manual redelivery is claimed apart, once, while the lease of the scheduled claim holds it not.
    clock.advance(LEASE_MS + MINUTE);
    await app.db
      .updateTable('webhook_deliveries')
      .set({ manual_requested_at: clock.now().toISOString() })
      .where('endpoint_id', '=', endpointId)
      .where('event_seq', '=', seqs[0]!)
      .execute();
    const manual = await claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: true });
    assert.deepEqual(
      manual.map((d) => [d.event_seq, d.manual]),
      [[seqs[0], true]],
    );
    assert.equal((await claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: true })).length, 0, 'leased: not claimed again');
    // The lease ran out for the scheduled claims: all six are due again (the manual one is leased).
    assert.equal((await claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: false })).length, 5);
    await app.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpointId).execute();
  });

  test('Postgres: a claim skips rows another transaction holds instead of waiting for it', async (t) => {
    if (!isPostgres(app.db)) return t.skip('Postgres only (set SVC_TEST_DATABASE_URL)');
    const endpointId = await endpointWithDeliveries(6);
    const seqs = (await app.db.selectFrom('webhook_deliveries').select('event_seq').where('endpoint_id', '=', endpointId).orderBy('event_seq').execute()).map(
      (r) => Number(r.event_seq),
    );
    const held = seqs.slice(0, 3);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Another dispatcher's claim in the middle of its statement: it holds the first three rows.
    const holder = app.db.transaction().execute(async (trx) => {
      await sql`select event_seq from webhook_deliveries where endpoint_id = ${endpointId} and event_seq in (${sql.join(held)}) for update`.execute(trx);
      locked();
      await released;
    });
    await isLocked;
    try {
      const claim = claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: false });
      // Without SKIP LOCKED it would wait until the other transaction ends, which is never before the release below.
      const outcome = await Promise.race([claim, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 20_000).unref())]);
      assert.notEqual(outcome, 'waited', 'the claim waited for the other transaction');
      assert.deepEqual(
        (outcome as { event_seq: number }[]).map((d) => d.event_seq).sort((a, b) => a - b),
        seqs.slice(3),
      );
    } finally {
      release();
      await holder;
    }
    // Once the other transaction ends, its rows are free to claim.
    const rest = await claimDeliveries(app, { limit: 10, busyEndpoints: [], manual: false });
    assert.deepEqual(
      rest.map((d) => d.event_seq).sort((a, b) => a - b),
      held,
    );
  });

  test('a batch of failed attempts is written with a few statements: retries scheduled, the last retry given up', async () => {
    const endpointId = await endpointWithDeliveries(300);
    const claimed = await claimDeliveries(app, { limit: 1000, busyEndpoints: [], manual: false });
    assert.equal(claimed.length, 300);
    // The first 50 have had their last retry: this failure gives them up.
    const last = claimed.slice(0, 50);
    for (const d of last) d.attempts = RETRY_SCHEDULE_MS.length;
    await app.db
      .updateTable('webhook_deliveries')
      .set({ attempts: RETRY_SCHEDULE_MS.length })
      .where('endpoint_id', '=', endpointId)
      .where(
        'event_seq',
        'in',
        last.map((d) => d.event_seq),
      )
      .execute();
    const startedAt = clock.now();
    const finishedAt = new Date(startedAt.getTime() + 20);
    const batch = claimed.map((delivery) => ({
      delivery,
      startedAt,
      startedAtText: startedAt.toISOString(),
      finishedAt,
      result: { succeeded: false, statusCode: 500, durationMs: 20, response: 'down', error: 'the receiver answered 500', gone: false },
    }));
    let statements = 0;
    const counting = app.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        statements++;
        return args.result;
      },
    });
    const tally = await counting.transaction().execute((trx) => writeResults({ db: trx, clock, log: app.log }, batch, { checkExisting: false }));
    const { retryTimes, ...counts } = tally;
    assert.deepEqual(counts, { succeeded: 0, retried: 250, failed: 50 });
    assert.equal(retryTimes.length, 250, 'when each retry comes due, for the dispatcher');
    assert.ok(
      retryTimes.every((at) => at >= finishedAt.getTime() + RETRY_SCHEDULE_MS[0] && at <= finishedAt.getTime() + RETRY_SCHEDULE_MS[0] * (1 + RETRY_JITTER)),
    );
    // SQLite: attempt rows (128 + 128 + 32 + 8 + 4), the endpoint's failure window, retries and
    // given-up deliveries in as many chunks; one statement per failed delivery before. Postgres: one
    // statement each (arrays unnested), whatever the number of rows: attempt rows, the endpoint's
    // read and its failure window, retries, given-up deliveries.
    const most = isPostgres(app.db) ? 5 : 20;
    assert.ok(statements <= most, `${statements} statements for 300 failed attempts`);

    const rows = await app.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).execute();
    const lastSeqs = new Set(last.map((d) => d.event_seq));
    for (const r of rows) {
      assert.equal(r.lease_until, null);
      assert.equal(r.last_attempt_at, clock.now().toISOString());
      if (lastSeqs.has(Number(r.event_seq))) {
        assert.equal(r.status, 'failed');
        assert.equal(r.attempts, RETRY_SCHEDULE_MS.length + 1);
        assert.equal(r.next_attempt_at, null);
        assert.equal(r.finished_at, clock.now().toISOString());
      } else {
        assert.equal(r.status, 'pending');
        assert.equal(r.attempts, 1);
        const delay = Date.parse(r.next_attempt_at!) - finishedAt.getTime();
        assert.ok(delay >= RETRY_SCHEDULE_MS[0] && delay <= RETRY_SCHEDULE_MS[0] * (1 + RETRY_JITTER), `retry in ${delay} ms`);
        assert.equal(r.finished_at, null);
      }
    }
    const logged = await app.db.selectFrom('webhook_attempts').select(['attempt', 'outcome']).where('endpoint_id', '=', endpointId).execute();
    assert.equal(logged.length, 300);
    assert.ok(logged.every((a) => a.outcome === 'failed'));
    const endpoint = await app.db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', endpointId).executeTakeFirstOrThrow();
    assert.equal(endpoint.failing_since, startedAt.toISOString());
  });
  test("workspace deletion removes the workspace's events still in the outbox first: their deliveries are never made", async () => {
    await endpointWithDeliveries(0);
    for (let i = 0; i < 3; i++) await emitMessage(app, seed.workspaceId, seed.inboxId);
    const unsent = () => app.db.selectFrom('webhook_outbox').select('event_seq').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal((await unsent()).length, 3);
    assert.equal(await deleteWorkspaceWebhooks(app, seed.workspaceId, 2), 2, 'in batches');
    assert.equal(await deleteWorkspaceWebhooks(app, seed.workspaceId, 2), 1);
    assert.equal((await unsent()).length, 0);
    assert.deepEqual((await expandOutbox(app, { room: 10, load: new Map(), perEndpoint: 32, maxEvents: 64 })).claimed, []);
  });
  test('an event still in the outbox outlives the events retention until its deliveries are made', async () => {
    const endpointId = await endpointWithDeliveries(0);
    const unsent = await emitMessage(app, seed.workspaceId, seed.inboxId);
    const internal = await emitMessage(app, seed.workspaceId, seed.inboxId, { webhook: false });
    clock.advance((app.config.eventsRetentionDays + 1) * DAY);
    await pruneEvents(app);
    const kept = await app.db.selectFrom('events').select(['id', 'seq']).where('id', 'in', [unsent.message.id, unsent.id, internal.id]).execute();
    assert.deepEqual(
      kept.map((e) => e.id),
      [unsent.id],
      'the event waiting in the outbox stays; an old event no delivery needs goes',
    );
    await makeDeliveries();
    const delivery = await app.db.selectFrom('webhook_deliveries').select('event_seq').where('endpoint_id', '=', endpointId).executeTakeFirstOrThrow();
    assert.equal(Number(delivery.event_seq), Number(kept[0].seq));
  });
});
