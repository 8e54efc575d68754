// The event stream: GET /v1/events replay and the GET /v1/realtime WebSocket, scoped to the caller,
// resumable without gaps or duplicates, with an explicit expiry once events are no longer kept.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { keyAccess, memberAccess } from '../../src/auth/access.js';
import { accessStillValid } from '../../src/auth/credentials.js';
import type { App } from '../../src/context.js';
import { announceEvents, recordEvent, streamPosition } from '../../src/events/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { endSession } from '../../src/people/service.js';
import { DAY, HOUR, ManualClock, systemClock } from '../../src/platform/clock.js';
import { RealtimeStream } from '../../src/realtime/stream.js';
import { contactData, emit, emitMessage } from '../helpers/events.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, seedEmailChannel } from '../helpers/mail.js';
import { runSvc, startTestServer, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../helpers/webhooks.js';

/** A realtime client that keeps every frame. */
class Client {
  frames: any[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: (() => void)[] = [];
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)));
      this.notify();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.notify();
    });
  }
  private notify() {
    for (const w of this.waiters.splice(0)) w();
  }
  events() {
    return this.frames.filter((f) => f.type === 'event').map((f) => f.event);
  }
  async until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const started = Date.now();
    while (!check()) {
      if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames.slice(-5))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }
  close() {
    this.ws.close();
  }
}

function connect(s: TestServer, opts: { token?: string; cookie?: string; after?: number; query?: string } = {}): Promise<Client> {
  const url = new URL(s.url.replace('http', 'ws') + '/v1/realtime');
  if (opts.after !== undefined) url.searchParams.set('after', String(opts.after));
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.cookie) headers.cookie = opts.cookie;
  const ws = new WebSocket(url + (opts.query ?? ''), { headers });
  const client = new Client(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`refused with ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
}

describe('event replay and realtime', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;

  before(async () => {
    clock = new ManualClock('2030-06-01T00:00:00Z');
    s = await startTestServer({ clock });
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('GET /v1/events pages through the workspace’s events oldest first', async () => {
    const ws = await seedWorkspace(s.app);
    const written = [];
    for (let i = 0; i < 5; i++) written.push(await emitMessage(s.app, ws.workspaceId, ws.inboxId));
    await emitMessage(s.app, seed.workspaceId, seed.inboxId); // another workspace
    const first = await s.request('GET', '/v1/events?limit=3', { token: ws.apiKey });
    assert.equal(first.status, 200);
    assert.deepEqual(
      first.body.data.map((e: any) => e.id),
      written.slice(0, 3).map((w) => w.id),
    );
    const e = first.body.data[0];
    assert.deepEqual(Object.keys(e), ['seq', 'id', 'type', 'timestamp', 'workspace_id', 'inbox_id', 'data']);
    assert.equal(e.type, 'message.created');
    assert.equal(e.inbox_id, ws.inboxId);
    assert.equal(e.seq, await positionOf(s.app, written[0].id));
    assert.equal(first.body.next_cursor, String(await positionOf(s.app, written[2].id)));
    const rest = await s.request('GET', `/v1/events?after=${first.body.next_cursor}&limit=3`, { token: ws.apiKey });
    assert.deepEqual(
      rest.body.data.map((x: any) => x.id),
      written.slice(3).map((w) => w.id),
    );
    assert.equal(rest.body.next_cursor, null);
    const none = await s.request('GET', `/v1/events?after=${rest.body.last_seq}`, { token: ws.apiKey });
    assert.deepEqual(none.body.data, []);
    assert.equal(none.body.last_seq, rest.body.last_seq);
    for (const bad of ['after=-1', 'after=abc', 'limit=0', 'limit=201']) {
      assert.equal((await s.request('GET', `/v1/events?${bad}`, { token: ws.apiKey })).status, 400, bad);
    }
  });

  test('the caller’s inbox limit and scopes decide what it sees; migration kinds go to owners and admins', async () => {
    const ws = await seedWorkspace(s.app);
    const second = await createInbox(s.app, { workspaceId: ws.workspaceId, name: 'Second' });
    const inFirst = await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    const inSecond = await emitMessage(s.app, ws.workspaceId, second.id);
    const linked = contactData({ externalIds: [{ inbox_id: second.id, external_id: 'e' }] });
    const contactEvent = await emit(s.app, { workspaceId: ws.workspaceId, contactId: linked.id, type: 'contact.updated', data: { contact: linked } });
    const migration = await emit(s.app, { workspaceId: ws.workspaceId, type: 'migration.progress', data: { migration: { id: 'mig_1', copied: 10 } } });

    const limited = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'l', inboxIds: [second.id] });
    const contactsOnly = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'c', scopes: ['contacts:read'] });
    const noRead = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'n', scopes: ['webhooks:manage'] });
    const admin = await addPerson(s.app, ws.workspaceId, 'admin');
    const agent = await addPerson(s.app, ws.workspaceId, 'agent');
    const seen = async (token: string) => (await s.request('GET', '/v1/events', { token })).body.data.map((e: any) => e.id);

    assert.deepEqual(await seen(ws.apiKey), [inFirst.id, inSecond.id, contactEvent.id, migration.id], 'a full key may use migrations');
    assert.deepEqual(await seen(ws.ownerToken), [inFirst.id, inSecond.id, contactEvent.id, migration.id]);
    assert.deepEqual(await seen(admin.token), [inFirst.id, inSecond.id, contactEvent.id, migration.id]);
    assert.deepEqual(await seen(agent.token), [inFirst.id, inSecond.id, contactEvent.id]);
    assert.deepEqual(await seen(limited.secret), [inSecond.id, contactEvent.id]);
    assert.deepEqual(await seen(contactsOnly.secret), [contactEvent.id]);
    assert.equal((await s.request('GET', '/v1/events', { token: noRead.secret })).status, 403);
    assert.equal((await s.request('GET', '/v1/events')).status, 401);
  });

  test('events are kept SVC_EVENTS_RETENTION_DAYS (7); an older cursor is cursor_expired (410)', async () => {
    const t = await startTestServer({ clock: new ManualClock('2031-01-01T00:00:00Z') });
    try {
      assert.equal(t.app.config.eventsRetentionDays, 7);
      const ws = await seedWorkspace(t.app);
      const old = await emitMessage(t.app, ws.workspaceId, ws.inboxId);
      const oldPosition = await positionOf(t.app, old.id);
      (t.clock as ManualClock).advance(6 * DAY);
      const recent = await emitMessage(t.app, ws.workspaceId, ws.inboxId);
      await t.app.jobs.drain();
      let r = await t.request('GET', `/v1/events?after=0`, { token: ws.apiKey });
      const rows = await t.app.db.selectFrom('events').selectAll().execute();
      assert.equal(r.status, 200, JSON.stringify({ body: r.body, now: t.clock.now(), rows: rows.map((x) => [x.seq, x.position, x.occurred_at, x.type]) }));
      assert.deepEqual(
        r.body.data.map((e: any) => e.id),
        [old.id, recent.id],
        'six days: everything kept',
      );
      (t.clock as ManualClock).advance(DAY + HOUR);
      await t.app.jobs.drain(); // the hourly clean-up
      r = await t.request('GET', `/v1/events?after=0`, { token: ws.apiKey });
      assert.equal(r.status, 410);
      assert.equal(r.body.error.code, 'cursor_expired');
      assert.equal(r.body.error.pruned_through, oldPosition);
      r = await t.request('GET', `/v1/events?after=${oldPosition}`, { token: ws.apiKey });
      assert.deepEqual(
        r.body.data.map((e: any) => e.id),
        [recent.id],
        'a cursor at the cut is still good',
      );
      r = await t.request('GET', '/v1/events', { token: ws.apiKey });
      assert.deepEqual(
        r.body.data.map((e: any) => e.id),
        [recent.id],
        'without after: from the oldest kept event',
      );
      const gone = await t.app.db.selectFrom('events').select('id').where('id', '=', old.id).executeTakeFirst();
      assert.equal(gone, undefined, 'the row is deleted');
      r = await t.request('GET', `/v1/events?after=${(await positionOf(t.app, recent.id)) + 1000}`, { token: ws.apiKey });
      assert.equal(r.status, 410, 'a cursor this server never handed out');
      const c = await connect(t, { token: ws.apiKey, after: 0 });
      await c.until(() => c.closed !== undefined, 'close');
      assert.deepEqual(
        c.frames.map((f) => f.type),
        ['hello', 'cursor_expired'],
      );
      assert.equal(c.frames[1].after, 0);
      assert.equal(c.closed!.code, 4410);
    } finally {
      await t.stop();
    }
  });

  test('events a webhook delivery still refers to stay for redelivery, outside the replayed stream', async () => {
    const rx = await startReceiver();
    const t = await startTestServer({
      clock: new ManualClock('2031-01-01T00:00:00Z'),
      env: { SVC_EVENTS_RETENTION_DAYS: '1', SVC_WEBHOOK_ALLOW_PRIVATE: '1' },
    });
    try {
      assert.equal(t.app.config.eventsRetentionDays, 1);
      const ws = await seedWorkspace(t.app);
      const hook = await t.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/keep` } });
      const old = await emitMessage(t.app, ws.workspaceId, ws.inboxId);
      await t.app.jobs.drain();
      (t.clock as ManualClock).advance(2 * DAY);
      await t.app.jobs.drain();
      const r = await t.request('GET', '/v1/events?after=0', { token: ws.apiKey });
      assert.equal(r.status, 410);
      assert.deepEqual((await t.request('GET', '/v1/events', { token: ws.apiKey })).body.data, []);
      const [entry] = (await t.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { token: ws.apiKey })).body.data;
      await t.request('POST', `/v1/webhooks/${hook.body.id}/deliveries/${entry.delivery_id}/redeliver`, { token: ws.apiKey });
      await t.app.jobs.drain();
      const got = rx.received.filter((x) => x.path === '/keep');
      assert.equal(got.length, 2);
      assert.equal(got[1].body, got[0].body, 'the same payload');
      assert.equal(JSON.parse(got[1].body).data.message.id, old.message.id);
    } finally {
      await t.stop();
      await rx.close();
    }
  });

  test('realtime: API key or session cookie; without credentials 401; plain GET 426', async () => {
    const ws = await seedWorkspace(s.app);
    const byKey = await connect(s, { token: ws.apiKey });
    await byKey.until(() => byKey.frames.some((f) => f.type === 'live'), 'live');
    const hello = byKey.frames[0];
    assert.equal(hello.type, 'hello');
    assert.match(hello.connection_id, /^rt_/);
    assert.equal(hello.heartbeat_seconds, 25);
    const byCookie = await connect(s, { cookie: `svc_session=${ws.ownerToken}` });
    await byCookie.until(() => byCookie.frames.some((f) => f.type === 'live'), 'live');
    const event = await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    for (const c of [byKey, byCookie]) {
      await c.until(() => c.events().length === 1, 'the event');
      assert.equal(c.events()[0].id, event.id);
      assert.equal(c.events()[0].seq, await positionOf(s.app, event.id));
    }
    const rows = await s.app.db.selectFrom('realtime_connections').selectAll().where('workspace_id', '=', ws.workspaceId).orderBy('connected_at').execute();
    assert.deepEqual(rows.map((r) => [r.kind, r.closed_at]).sort(), [
      ['api_key', null],
      ['member', null],
    ]);
    byKey.close();
    byCookie.close();
    await byKey.until(() => byKey.closed !== undefined, 'close');
    await waitFor(async () => {
      const open = await s.app.db
        .selectFrom('realtime_connections')
        .select('id')
        .where('workspace_id', '=', ws.workspaceId)
        .where('closed_at', 'is', null)
        .execute();
      return open.length === 0;
    });

    await assert.rejects(connect(s), (e: any) => e.status === 401);
    await assert.rejects(connect(s, { token: 'svc_sk_nope' }), (e: any) => e.status === 401);
    await assert.rejects(connect(s, { token: ws.apiKey, after: -3 }), (e: any) => e.status === 400);
    const plain = await s.request('GET', '/v1/realtime', { token: ws.apiKey });
    assert.equal(plain.status, 426);
    assert.equal(plain.body.error.code, 'upgrade_required');
  });

  test('realtime: owners and admins get migration events, agents and inbox-limited keys do not', async () => {
    const ws = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, ws.workspaceId, 'agent');
    const limited = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'l', inboxIds: [ws.inboxId] });
    const owner = await connect(s, { token: ws.ownerToken });
    const agentC = await connect(s, { token: agent.token });
    const limitedC = await connect(s, { token: limited.secret });
    for (const c of [owner, agentC, limitedC]) await c.until(() => c.frames.some((f) => f.type === 'live'), 'live');
    await emit(s.app, {
      workspaceId: ws.workspaceId,
      type: 'migration.forwarding_confirmation',
      data: { migration_id: 'mig_1', code: '123', link: 'https://x' },
    });
    const msg = await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    for (const c of [owner, agentC, limitedC]) await c.until(() => c.events().some((e) => e.id === msg.id), 'the message');
    assert.deepEqual(
      owner.events().map((e) => e.type),
      ['migration.forwarding_confirmation', 'message.created'],
    );
    assert.deepEqual(
      agentC.events().map((e) => e.type),
      ['message.created'],
    );
    assert.deepEqual(
      limitedC.events().map((e) => e.type),
      ['message.created'],
    );
    for (const c of [owner, agentC, limitedC]) c.close();
  });

  test('realtime: resuming with after= under concurrent writes is gap-free and has no duplicates', async () => {
    const ws = await seedWorkspace(s.app);
    const before = [];
    for (let i = 0; i < 60; i++) before.push(await emitMessage(s.app, ws.workspaceId, ws.inboxId));
    const resumeAfter = await positionOf(s.app, before[19].id);
    // Writers in parallel (on Postgres they are concurrent transactions), while the client catches up.
    const writers = Promise.all(
      [0, 1, 2, 3].map(async () => {
        for (let i = 0; i < 50; i++) {
          await emitMessage(s.app, ws.workspaceId, ws.inboxId);
          if (i % 10 === 0) await emit(s.app, { workspaceId: seed.workspaceId, type: 'contact.updated', data: { contact: contactData() } }); // another workspace
        }
      }),
    );
    const c = await connect(s, { token: ws.apiKey, after: resumeAfter });
    await writers;
    const expected = (await s.app.db.selectFrom('events').selectAll().where('workspace_id', '=', ws.workspaceId).execute())
      .map(streamPosition)
      .filter((p) => p > resumeAfter)
      .sort((a, b) => a - b);
    assert.equal(expected.length, 40 + 200);
    await c.until(() => c.events().length >= expected.length, `${expected.length} events`);
    // A moment more: nothing extra may arrive.
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await c.until(() => c.events().length === expected.length + 1, 'the last event');
    const got = c.events().map((e) => e.seq);
    assert.deepEqual(got.slice(0, expected.length), expected);
    assert.equal(new Set(got).size, got.length, 'no duplicates');
    assert.equal(c.frames.filter((f) => f.type === 'live').length, 1);
    c.close();
  });

  test('realtime: an event whose transaction commits after a later one is not skipped', async () => {
    const ws = await seedWorkspace(s.app);
    const c = await connect(s, { token: ws.apiKey });
    await c.until(() => c.frames.some((f) => f.type === 'live'), 'live');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slowId = '';
    const slow = s.app.db.transaction().execute(async (trx) => {
      slowId = (
        await recordEvent(
          { db: trx, clock: s.app.clock },
          { workspaceId: ws.workspaceId, type: 'contact.updated', occurredAt: clock.now(), data: { contact: contactData() } },
        )
      ).id;
      await gate;
    });
    // On Postgres the second transaction commits while the first is still open; on SQLite it waits.
    const fast = emitMessage(s.app, ws.workspaceId, ws.inboxId);
    if (s.app.dialect === 'postgres') {
      const { id } = await fast;
      await c.until(() => c.events().some((e) => e.id === id), 'the later event');
    }
    release();
    await slow;
    await fast;
    announceEvents(s.app);
    await c.until(() => c.events().length === 2, 'both events');
    assert.ok(
      c.events().some((e) => e.id === slowId),
      'the late commit arrives too',
    );
    const seqs = c.events().map((e) => e.seq);
    assert.ok(seqs[0] < seqs[1]);
    c.close();
  });

  test('credentials are re-checked: revoked keys, ended sessions, left workspaces', async () => {
    const ws = await seedWorkspace(s.app);
    const key = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'k' });
    const access = keyAccess(ws.workspaceId, key.key.id, ['conversations:read'], null);
    assert.equal(await accessStillValid(s.app, access), true);
    await revokeApiKey(s.app, key.key.id);
    assert.equal(await accessStillValid(s.app, access), false);
    const person = await addPerson(s.app, ws.workspaceId, 'agent');
    const session = await s.app.db.selectFrom('sessions').select('id').where('person_id', '=', person.personId).executeTakeFirstOrThrow();
    const member = memberAccess(ws.workspaceId, person.personId, 'agent', session.id);
    assert.equal(await accessStillValid(s.app, member), true);
    await s.app.db.deleteFrom('memberships').where('person_id', '=', person.personId).execute();
    assert.equal(await accessStillValid(s.app, member), false, 'no longer a member');
    const owner = await s.app.db.selectFrom('sessions').select(['id', 'person_id']).where('person_id', '=', ws.ownerId).executeTakeFirstOrThrow();
    const ownerAccess = memberAccess(ws.workspaceId, ws.ownerId, 'owner', owner.id);
    assert.equal(await accessStillValid(s.app, ownerAccess), true);
    await endSession(s.app, owner.id);
    assert.equal(await accessStillValid(s.app, ownerAccess), false, 'signed out');
  });

  test('heartbeats: frames with the cursor, the connection record kept fresh, a silent peer dropped', async () => {
    const ws = await seedWorkspace(s.app);
    const wss = new WebSocketServer({ noServer: true });
    const server = http.createServer();
    const streams: RealtimeStream[] = [];
    const checked = await createApiKey(s.app, { workspaceId: ws.workspaceId, name: 'checked' });
    const checkedAccess = keyAccess(ws.workspaceId, checked.key.id, ['conversations:read'], null);
    server.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (sock) => {
        const stream = new RealtimeStream(s.app, sock, {
          viewer: { workspaceId: ws.workspaceId, inboxIds: null, admin: false, conversations: true, contacts: true },
          after: undefined,
          subject: { kind: 'api_key', id: 'key_test' },
          heartbeatMs: 250,
          stillAllowed: req.url === '/checked' ? () => accessStillValid(s.app, checkedAccess) : undefined,
        });
        streams.push(stream);
        void stream.start();
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const sock = new WebSocket(url);
      const c = new Client(sock);
      await c.until(() => c.frames.filter((f) => f.type === 'heartbeat').length >= 2, 'heartbeats');
      const beat = c.frames.find((f) => f.type === 'heartbeat');
      assert.equal(typeof beat.cursor, 'number');
      assert.equal(beat.time, clock.now().toISOString());
      const row = await s.app.db.selectFrom('realtime_connections').selectAll().where('subject_id', '=', 'key_test').executeTakeFirstOrThrow();
      assert.equal(row.closed_at, null);
      c.close();
      await c.until(() => c.closed !== undefined, 'close');

      // Credentials are checked again on every heartbeat: a revoked key ends the stream.
      const revokedSock = new Client(new WebSocket(url + 'checked'));
      await revokedSock.until(() => revokedSock.frames.some((f) => f.type === 'heartbeat'), 'a heartbeat');
      await revokeApiKey(s.app, checked.key.id);
      await revokedSock.until(() => revokedSock.closed !== undefined, 'close after revocation');
      assert.equal(revokedSock.closed!.code, 4401);
      assert.equal(revokedSock.frames[revokedSock.frames.length - 1].type, 'unauthorized');

      // A peer that stops answering pings is terminated after one missed heartbeat.
      const silent = new WebSocket(url, { autoPong: false } as WebSocket.ClientOptions);
      const sc = new Client(silent);
      await sc.until(() => sc.closed !== undefined, 'the server to drop a silent peer');
      assert.equal(sc.closed!.code, 1006);
    } finally {
      for (const st of streams) await st.stop();
      wss.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('events recorded by another process', () => {
  test('mail stored by `svc ingest-email` reaches an open realtime socket and the webhook', async () => {
    const rx = await startReceiver();
    // The real clock: the command's times and the server's must agree (deliveries are due by time).
    const t = await startTestServer({ clock: systemClock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    try {
      const ws = await seedWorkspace(t.app);
      const address = (await seedEmailChannel(t.app, ws)).address!;
      assert.equal((await t.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/piped` } })).status, 201);
      const sock = await connect(t, { token: ws.apiKey });
      await sock.until(() => sock.frames.some((f) => f.type === 'live'), 'live');

      const piped = await runSvc(['ingest-email', '--to', address], { env: t.env, input: rawMail({ To: address, Subject: 'From the pipe' }) });
      assert.equal(piped.code, 0, piped.stderr);
      const messageId = piped.stdout.trim();
      const isPiped = (e: any) => e.type === 'message.created' && e.data.message.id === messageId;
      // Nothing in this process announces the command's commit but the stream watch (how soon is
      // not timed: a loaded machine may take seconds).
      await sock.until(() => sock.events().some(isPiped), 'the piped mail on the socket');

      const hooks = await rx.waitFor(1);
      assert.ok(hooks.some((h) => h.path === '/piped'));
      sock.close();
    } finally {
      await t.stop();
      await rx.close();
    }
  });
});

/** Where an event stands in the stream (assigned at commit on Postgres). */
async function positionOf(app: App, eventId: string): Promise<number> {
  return streamPosition(await app.db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow());
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
