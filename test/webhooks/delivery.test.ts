// Webhook delivery end to end: real server (movable clock), a receiver on 127.0.0.1, every delivery
// verified with the standardwebhooks package.
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { announceEvents, recordEvent } from '../../src/events/service.js';
import { HOUR, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { closeConnection, deleteStaleConnections, markConnection, touchConnection } from '../../src/realtime/connections.js';
import { DISABLED_FAILING, DISABLED_GONE } from '../../src/webhooks/deliveries.js';
import { contactData, emit, emitMessage } from '../helpers/events.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

describe('webhook delivery', () => {
  let s: TestServer;
  let clock: ManualClock;
  let rx: Receiver;

  before(async () => {
    clock = new ManualClock('2030-01-01T00:00:00Z');
    s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1' } });
    rx = await startReceiver();
  });
  after(async () => {
    await rx.close();
    await s.stop();
  });

  const drain = () => s.app.jobs.drain();

  async function endpoint(seed: Seed, body: Record<string, unknown> = {}, path = `/${Math.random().toString(36).slice(2)}`) {
    const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: rx.url + path, ...body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { id: r.body.id as string, secret: r.body.secret as string, path };
  }
  const at = (path: string) => rx.received.filter((r) => r.path === path);
  const deliveries = (endpointId: string) =>
    s.app.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).orderBy('event_seq').execute();
  const attempts = (endpointId: string) =>
    s.app.db.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', endpointId).orderBy('started_at').orderBy('id').execute();
  const endpointRow = (id: string) => s.app.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('message.created arrives signed, with the spec payload shape and strict headers', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    const occurredAt = new Date(clock.now().getTime() - 1500);
    const contact = contactData();
    const conversation = { id: 'cv_x', inbox_id: seed.inboxId, status: 'open' };
    const message = {
      id: 'm_x',
      conversation_id: 'cv_x',
      kind: 'message',
      direction: 'in',
      author: { type: 'contact' },
      body: 'Hi',
      attachments: [],
      created_at: occurredAt.toISOString(),
    };
    const { id: eventId } = await emit(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      contactId: contact.id,
      type: 'message.created',
      occurredAt,
      data: { message, conversation, contact },
    });
    await drain();
    const got = at(ep.path);
    assert.equal(got.length, 1);
    const payload = verifyDelivery(got[0], ep.secret, clock);
    assert.deepEqual(Object.keys(payload), ['type', 'timestamp', 'workspace_id', 'inbox_id', 'data']);
    assert.equal(payload.type, 'message.created');
    assert.equal(payload.timestamp, occurredAt.toISOString(), 'the time of the change, not of sending');
    assert.equal(payload.workspace_id, seed.workspaceId);
    assert.equal(payload.inbox_id, seed.inboxId);
    assert.deepEqual(Object.keys(payload.data).sort(), ['contact', 'conversation', 'message']);
    assert.deepEqual(payload.data.message, message);
    assert.equal(payload.data.contact.online, false);
    assert.equal(got[0].headers['webhook-id'], `msg_${eventId.slice(4)}`);
    assert.equal(got[0].headers['webhook-timestamp'], String(Math.floor(clock.now().getTime() / 1000)));
    const [d] = await deliveries(ep.id);
    assert.equal(d.status, 'succeeded');
    assert.equal(d.attempts, 1);
  });

  test('a burst claimed and written as one batch (more rows than one statement takes): each delivery sent once, logged once, finished', async () => {
    const seed = await seedWorkspace(s.app);
    const eps = [];
    for (let i = 0; i < 5; i++) eps.push(await endpoint(seed));
    // 30 events in one transaction: the dispatcher claims all 150 deliveries at once and writes their
    // results together (attempt rows and updates cut into 128 + 16 + 4 + 2 rows).
    const eventIds = await s.app.db.transaction().execute(async (trx) => {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const contact = contactData();
        const r = await recordEvent(
          { db: trx, clock },
          { workspaceId: seed.workspaceId, contactId: contact.id, type: 'contact.updated', occurredAt: clock.now(), data: { contact } },
        );
        ids.push(r.id);
      }
      return ids;
    });
    announceEvents(s.app);
    await drain();
    for (const ep of eps) {
      const got = at(ep.path);
      assert.deepEqual(got.map((r) => r.headers['webhook-id']).sort(), eventIds.map((id) => `msg_${id.slice(4)}`).sort());
      for (const r of got) verifyDelivery(r, ep.secret, clock);
      const ds = await deliveries(ep.id);
      assert.equal(ds.length, 30);
      assert.ok(ds.every((d) => d.status === 'succeeded' && d.attempts === 1 && d.next_attempt_at === null && d.lease_until === null));
      const log = await attempts(ep.id);
      assert.equal(log.length, 30);
      assert.ok(log.every((a) => a.outcome === 'succeeded' && a.attempt === 1 && a.status_code === 200));
      assert.deepEqual(new Set(log.map((a) => a.event_seq)).size, 30);
    }
  });

  test('contact events carry no inbox_id; contact.deleted keeps merged_into_id and the external ids', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed, { events: ['contact.updated', 'contact.deleted'] });
    const contact = contactData({ externalIds: [{ inbox_id: seed.inboxId, external_id: 'u-1' }] });
    await emit(s.app, { workspaceId: seed.workspaceId, contactId: contact.id, type: 'contact.updated', data: { contact } });
    await emit(s.app, {
      workspaceId: seed.workspaceId,
      contactId: contact.id,
      type: 'contact.deleted',
      data: { contact: { ...contact, merged_into_id: 'ct_target' } },
    });
    await emitMessage(s.app, seed.workspaceId, seed.inboxId); // not subscribed
    await drain();
    const got = at(ep.path).map((r) => verifyDelivery(r, ep.secret, clock));
    assert.deepEqual(got.map((p) => p.type).sort(), ['contact.deleted', 'contact.updated']);
    for (const p of got) {
      assert.deepEqual(Object.keys(p), ['type', 'timestamp', 'workspace_id', 'data']);
      assert.deepEqual(Object.keys(p.data), ['contact']);
    }
    const deleted = got.find((p) => p.type === 'contact.deleted');
    assert.equal(deleted.data.contact.merged_into_id, 'ct_target');
    assert.deepEqual(deleted.data.contact.external_ids, [{ inbox_id: seed.inboxId, external_id: 'u-1' }]);
  });

  test('notes only with include_notes; internal events never; inbox filter', async () => {
    const seed = await seedWorkspace(s.app);
    const other = await s.request('POST', '/v1/inboxes', { token: seed.apiKey, body: { name: 'Sales' } });
    const salesInbox = other.body.id as string;
    const plain = await endpoint(seed);
    const notes = await endpoint(seed, { include_notes: true });
    const onlySales = await endpoint(seed, { inbox_id: salesInbox });
    await emitMessage(s.app, seed.workspaceId, seed.inboxId); // everyone but onlySales
    await emitMessage(s.app, seed.workspaceId, seed.inboxId, { isNote: true }); // notes only
    await emitMessage(s.app, seed.workspaceId, seed.inboxId, { webhook: false }); // nobody
    await emitMessage(s.app, seed.workspaceId, salesInbox); // all three
    const withExternalId = contactData({ externalIds: [{ inbox_id: salesInbox, external_id: 'x' }] });
    await emit(s.app, { workspaceId: seed.workspaceId, contactId: withExternalId.id, type: 'contact.updated', data: { contact: withExternalId } }); // all three
    const elsewhere = contactData({ externalIds: [{ inbox_id: seed.inboxId, external_id: 'y' }] });
    await emit(s.app, { workspaceId: seed.workspaceId, contactId: elsewhere.id, type: 'contact.updated', data: { contact: elsewhere } }); // not onlySales
    await drain();
    const kinds = (ep: { path: string; secret: string }) =>
      at(ep.path)
        .map((r) => verifyDelivery(r, ep.secret, clock))
        .map(
          (p) =>
            `${p.type}:${p.data.message?.kind ?? ''}:${p.inbox_id === salesInbox || p.data.contact.external_ids?.[0]?.inbox_id === salesInbox ? 'sales' : 'support'}`,
        )
        .sort();
    assert.deepEqual(kinds(plain), ['contact.updated::sales', 'contact.updated::support', 'message.created:message:sales', 'message.created:message:support']);
    assert.deepEqual(kinds(notes), [
      'contact.updated::sales',
      'contact.updated::support',
      'message.created:message:sales',
      'message.created:message:support',
      'message.created:note:support',
    ]);
    assert.deepEqual(kinds(onlySales), ['contact.updated::sales', 'message.created:message:sales']);
  });

  test('the online flag: true while the contact has a live connection when the webhook is prepared', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed, { events: ['contact.updated'] });
    const contact = contactData();
    const conn = await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'contact', subjectId: contact.id });
    await emit(s.app, { workspaceId: seed.workspaceId, contactId: contact.id, type: 'contact.updated', data: { contact } });
    await closeConnection(s.app, conn.id);
    await emit(s.app, { workspaceId: seed.workspaceId, contactId: contact.id, type: 'contact.updated', data: { contact } });
    // The announcements woke the dispatcher, which may be sending these two right now. Moving the
    // clock past an attempt's 10 s deadline ends it as a timeout (and its retry is 5 s later), so
    // they are delivered before the clock moves.
    await drain();
    // A connection whose heartbeats stopped (its process died) stops counting after a while.
    await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'contact', subjectId: contact.id });
    clock.advance(2 * MINUTE);
    await emit(s.app, { workspaceId: seed.workspaceId, contactId: contact.id, type: 'contact.updated', data: { contact } });
    await drain();
    const flags = at(ep.path).map((r) => verifyDelivery(r, ep.secret, clock).data.contact.online);
    assert.deepEqual(flags, [true, false, false]);
    assert.deepEqual(
      (await attempts(ep.id)).map((a) => a.outcome),
      ['succeeded', 'succeeded', 'succeeded'],
    );
  });

  test('stale connection records are kept one hour', async () => {
    const seed = await seedWorkspace(s.app);
    const closed = await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'member', subjectId: seed.ownerId });
    const silent = await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'contact', subjectId: 'ct_silent' });
    const live = await markConnection(s.app, { workspaceId: seed.workspaceId, kind: 'api_key', subjectId: 'key_live' });
    await closeConnection(s.app, closed.id);
    const ids = async () =>
      (await s.app.db.selectFrom('realtime_connections').select('id').where('workspace_id', '=', seed.workspaceId).execute()).map((r) => r.id).sort();
    clock.advance(59 * MINUTE);
    await touchConnection(s.app, live.id);
    await deleteStaleConnections(s.app);
    assert.deepEqual(await ids(), [closed.id, silent.id, live.id].sort(), 'within the hour everything stays');
    clock.advance(MINUTE + 30_000); // 60.5 minutes after closing
    await touchConnection(s.app, live.id);
    await deleteStaleConnections(s.app);
    assert.deepEqual(await ids(), [silent.id, live.id].sort(), 'closed an hour ago: gone');
    clock.advance(MINUTE); // silent for 61.5 minutes: stale after one, kept one hour more
    await touchConnection(s.app, live.id);
    await deleteStaleConnections(s.app);
    assert.deepEqual(await ids(), [live.id], 'silent for an hour past going stale: gone');
  });

  test('retry schedule 5 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 9 h with up to 10% jitter, same webhook-id, fresh timestamps; disabled after 24 hours of failure', async () => {
    // The spec's values written out (Delivery and retry rules, Limits), not the code's constants.
    const slots = [5_000, MINUTE, 5 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 9 * HOUR];
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 500, body: 'boom' } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      const first = clock.now().getTime();
      let last = first;
      const lateBy: number[] = [];
      for (const [i, slot] of slots.entries()) {
        const [d] = await deliveries(ep.id);
        assert.equal(d.status, 'pending');
        assert.equal(d.attempts, i + 1);
        // At most 5 s + 1 min + … + 8 h, plus 10%: about 17 hours of failure so far.
        assert.equal((await endpointRow(ep.id)).disabled_at, null, `still enabled ${((last - first) / HOUR).toFixed(1)} h into the failure`);
        const due = Date.parse(d.next_attempt_at!);
        assert.ok(due - last >= slot && due - last <= slot * 1.1, `retry ${i + 1} comes ${due - last} ms after the failure, slot ${slot} ms`);
        lateBy.push(due - last - slot);
        clock.set(due - 1);
        await drain();
        assert.equal(at(ep.path).length, i + 1, 'nothing is sent before the retry is due');
        clock.set(due);
        await drain();
        assert.equal(at(ep.path).length, i + 2);
        last = due;
      }
      // Each slot gets a random share of its 10%: all nine landing exactly on their slots has odds below 1e-20.
      assert.ok(
        lateBy.some((ms) => ms > 0),
        'retries are spread by jitter',
      );
      const [d] = await deliveries(ep.id);
      assert.equal(d.status, 'failed', 'given up after the ninth retry');
      assert.equal(d.attempts, 10);
      assert.equal(d.next_attempt_at, null);
      const got = at(ep.path);
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id on every retry');
      const stamps = got.map((r) => Number(r.headers['webhook-timestamp']));
      assert.deepEqual(
        stamps,
        [...stamps].sort((a, b) => a - b),
      );
      assert.equal(new Set(stamps).size, stamps.length, 'each attempt is signed at send time');
      // Each attempt verifies at its own time (checked when it arrived: the clock has moved on since).
      const log = await attempts(ep.id);
      assert.equal(log.length, 10);
      assert.deepEqual(
        log.map((a) => a.attempt),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      assert.ok(log.every((a) => a.outcome === 'failed' && a.status_code === 500 && a.response === 'boom' && a.error === 'the receiver answered 500'));
      // The tenth attempt fails 24 h 36 min 5 s or more after the first: the endpoint is disabled then, with the reason shown.
      assert.ok(last - first >= 24 * HOUR + 36 * MINUTE + 5_000);
      const e = await endpointRow(ep.id);
      assert.equal(e.failing_since, new Date(first).toISOString());
      assert.equal(e.disabled_at, new Date(last).toISOString());
      assert.equal(e.disabled_reason, DISABLED_FAILING);
      const shown = await s.request('GET', `/v1/webhooks/${ep.id}`, { token: seed.apiKey });
      assert.equal(shown.body.enabled, false);
      assert.equal(shown.body.disabled_reason, DISABLED_FAILING);
      assert.ok(s.logs.some((l) => l.msg === 'webhook endpoint disabled' && l.endpoint_id === ep.id));
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('24 hours of unbroken failure disables the endpoint; a success resets the window', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    let failing = true;
    rx.handler = (r) => (r.path === ep.path && failing ? { status: 503 } : { status: 204 });
    try {
      const start = clock.now().getTime();
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).failing_since, new Date(start).toISOString());
      // 23 hours later one delivery gets through: the window starts again.
      clock.set(start + 23 * HOUR);
      failing = false;
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).failing_since, null);
      failing = true;
      const restart = clock.now().getTime();
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).failing_since, new Date(restart).toISOString());
      // Just under 24 hours after the new first failure: still enabled.
      clock.set(restart + 24 * HOUR - 1000);
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal((await endpointRow(ep.id)).disabled_at, null);
      clock.set(restart + 24 * HOUR);
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      const e = await endpointRow(ep.id);
      assert.equal(e.disabled_reason, DISABLED_FAILING);
      // Nothing more is sent: open deliveries ended, new events make none.
      const open = (await deliveries(ep.id)).filter((d) => d.status === 'pending');
      assert.equal(open.length, 0);
      const count = (await deliveries(ep.id)).length;
      const sent = at(ep.path).length;
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      clock.advance(10 * HOUR);
      await drain();
      assert.equal((await deliveries(ep.id)).length, count);
      assert.equal(at(ep.path).length, sent);
      // Enable clears the reason; deliveries flow again.
      const enabled = await s.request('POST', `/v1/webhooks/${ep.id}/enable`, { token: seed.apiKey });
      assert.equal(enabled.status, 200);
      assert.equal(enabled.body.enabled, true);
      assert.equal(enabled.body.disabled_reason, null);
      failing = false;
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal(at(ep.path).length, sent + 1);
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('410 disables the endpoint at once', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 410, body: 'gone' } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      const e = await endpointRow(ep.id);
      assert.ok(e.disabled_at);
      assert.equal(e.disabled_reason, DISABLED_GONE);
      const [d] = await deliveries(ep.id);
      assert.equal(d.status, 'failed');
      clock.advance(HOUR);
      await drain();
      assert.equal(at(ep.path).length, 1, 'no retries after 410');
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('a redirect is a failure and is not followed', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal(at(ep.path).length, 1);
      assert.equal(at('/elsewhere').length, 0);
      const [a] = await attempts(ep.id);
      assert.equal(a.outcome, 'failed');
      assert.equal(a.status_code, 302);
      assert.match(a.error!, /redirect \(302 to http:\/\/127\.0\.0\.1:\d+\/elsewhere\) not followed/);
      const [d] = await deliveries(ep.id);
      assert.equal(d.status, 'pending');
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('an answer slower than 10 s is a failure; 9 s is in time', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? 'hold' : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await rx.waitFor(rx.received.length + 0).then(() => waitUntil(() => at(ep.path).length === 1));
      clock.advance(9_000);
      rx.releaseHeld(200);
      await drain();
      let [a] = await attempts(ep.id);
      assert.equal(a.outcome, 'succeeded');

      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await waitUntil(() => at(ep.path).length === 2);
      clock.advance(11_000); // the receiver would answer after 11 s
      await drain();
      rx.releaseHeld(200);
      const log = await attempts(ep.id);
      a = log[log.length - 1];
      assert.equal(a.outcome, 'failed');
      assert.equal(a.error, 'no complete answer within 10 s');
      assert.equal(a.status_code, null);
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('at most 64 KiB of an answer is read: the connection is closed once that much arrived; the log keeps its start', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    const limit = 64 * 1024; // spec Limits: webhook answer bytes read
    const chunkSize = 1024;
    const total = 16 * 1024 * 1024;
    const bodyAt = (offset: number, length: number) => Buffer.from(Array.from({ length }, (_, i) => 97 + ((offset + i) % 26)));
    // The dispatcher's socket for this request. The receiver writes its next chunk only once that
    // socket has read everything written so far (or was closed), so nothing waits in the kernel's
    // buffers and what the receiver could write before the close is what the server read.
    let client: Socket | undefined;
    const onSendHeaders = (message: unknown) => {
      const { request, socket } = message as { request: { path: string }; socket: Socket };
      if (request.path === ep.path) client = socket;
    };
    diagnostics_channel.subscribe('undici:client:sendHeaders', onSendHeaders);
    let written = 0;
    let closed = false;
    let streamed!: () => void;
    const finished = new Promise<void>((resolve) => (streamed = resolve));
    rx.handler = (r) =>
      r.path === ep.path
        ? (res) => {
            res.on('close', () => (closed = true));
            res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
            void (async () => {
              const giveUp = Date.now() + 20_000;
              while (written < total && !closed && client && Date.now() < giveUp) {
                if (!client.destroyed && client.bytesRead < res.socket!.bytesWritten) {
                  await new Promise(setImmediate);
                  continue;
                }
                if (client.destroyed) break;
                res.write(bodyAt(written, chunkSize));
                written += chunkSize;
              }
              // The receiver's side of the connection closes too (not merely a stalled reader).
              if (!closed) await once(res, 'close', { signal: AbortSignal.timeout(10_000) }).catch(() => {});
              streamed();
            })();
          }
        : { status: 200 };
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      await finished;
      assert.ok(client, 'the request went out on a socket');
      assert.ok(client.destroyed && closed, 'the server closed the connection instead of reading on');
      assert.ok(written >= limit && written <= limit + chunkSize, `the receiver could write ${written} bytes before the close; ${limit} expected`);
      const [a] = await attempts(ep.id);
      assert.equal(a.outcome, 'succeeded', 'a 2xx is a success even when its answer is cut short');
      assert.ok(a.response!.length <= limit, 'the record holds no more than what was read');
      assert.equal(a.response, bodyAt(0, 1024).toString(), 'the attempt log keeps the start of the answer');
    } finally {
      diagnostics_channel.unsubscribe('undici:client:sendHeaders', onSendHeaders);
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('rotation: both secrets sign for 24 hours, then only the new one', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    const rotated = await s.request('POST', `/v1/webhooks/${ep.id}/secret`, { token: seed.apiKey });
    assert.equal(rotated.status, 200);
    const newSecret = rotated.body.secret as string;
    assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(newSecret, ep.secret);
    assert.equal(rotated.body.previous_secret_expires_at, new Date(clock.now().getTime() + 24 * HOUR).toISOString());
    await emitMessage(s.app, seed.workspaceId, seed.inboxId);
    await drain();
    const first = at(ep.path)[0];
    verifyDelivery(first, newSecret, clock, { signatures: 2 });
    verifyDelivery(first, ep.secret, clock, { signatures: 2 });
    clock.advance(24 * HOUR - 1000);
    await emitMessage(s.app, seed.workspaceId, seed.inboxId);
    await drain();
    verifyDelivery(at(ep.path)[1], ep.secret, clock, { signatures: 2 });
    clock.advance(1000);
    await emitMessage(s.app, seed.workspaceId, seed.inboxId);
    await drain();
    const last = at(ep.path)[2];
    verifyDelivery(last, newSecret, clock, { signatures: 1 });
    assert.throws(() => verifyDelivery(last, ep.secret, clock, { signatures: 1 }), /No matching signature/);
    const shown = await s.request('GET', `/v1/webhooks/${ep.id}`, { token: seed.apiKey });
    assert.equal(shown.body.previous_secret_expires_at, null);
  });

  test('delivery and attempt logs; redelivery is one manual attempt with the same webhook-id and no new schedule', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    let status = 500;
    rx.handler = (r) => (r.path === ep.path ? { status, body: `answer ${status}` } : { status: 200 });
    try {
      const { id: eventId } = await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      clock.advance(6_000);
      await drain();
      const log = await s.request('GET', `/v1/webhooks/${ep.id}/deliveries`, { token: seed.apiKey });
      assert.equal(log.status, 200);
      assert.equal(log.body.data.length, 2, 'one entry per attempt');
      const entry = log.body.data[0];
      assert.equal(entry.attempt, 2);
      assert.equal(entry.webhook_id, `msg_${eventId.slice(4)}`);
      assert.equal(entry.event_id, eventId);
      assert.equal(entry.event_type, 'message.created');
      assert.equal(entry.status, 'failed');
      assert.equal(entry.status_code, 500);
      assert.equal(entry.response, 'answer 500');
      assert.equal(entry.error, 'the receiver answered 500');
      assert.equal(typeof entry.latency_ms, 'number');
      assert.match(entry.delivery_id, /^dlv_/);
      assert.equal(entry.delivery_status, 'pending');
      assert.ok(entry.next_attempt_at);
      assert.equal(log.body.data[1].attempt, 1);

      status = 200;
      clock.advance(1000);
      const redo = await s.request('POST', `/v1/webhooks/${ep.id}/deliveries/${entry.delivery_id}/redeliver`, { token: seed.apiKey });
      assert.equal(redo.status, 202);
      assert.equal(redo.body.id, entry.delivery_id);
      assert.equal(redo.body.redelivery_requested, true);
      assert.equal(redo.body.attempts, 2);
      await drain();
      const got = at(ep.path);
      assert.equal(got.length, 3);
      assert.equal(got[2].headers['webhook-id'], entry.webhook_id);
      verifyDelivery(got[2], ep.secret, clock);
      const after1 = (await s.request('GET', `/v1/webhooks/${ep.id}/deliveries`, { token: seed.apiKey })).body.data[0];
      assert.equal(after1.manual, true);
      assert.equal(after1.attempt, null);
      assert.equal(after1.status, 'succeeded');
      assert.equal(after1.delivery_status, 'succeeded');
      assert.equal(after1.redelivery_requested, false);
      assert.equal(after1.next_attempt_at, null);

      // A failed manual attempt leaves the delivery as it was (no new schedule).
      status = 500;
      clock.advance(1000);
      const again = await s.request('POST', `/v1/webhooks/${ep.id}/deliveries/${entry.delivery_id}/redeliver`, { token: seed.apiKey });
      assert.equal(again.status, 202);
      await drain();
      clock.advance(10 * HOUR);
      await drain();
      assert.equal(at(ep.path).length, 4, 'one manual attempt, no retries');
      const after2 = (await s.request('GET', `/v1/webhooks/${ep.id}/deliveries`, { token: seed.apiKey })).body.data[0];
      assert.equal(after2.status, 'failed');
      assert.equal(after2.delivery_status, 'succeeded');
      assert.equal(after2.status_code, 500);

      const attemptsPage = await s.request('GET', `/v1/webhooks/${ep.id}/attempts?limit=2`, { token: seed.apiKey });
      assert.equal(attemptsPage.status, 200);
      assert.equal(attemptsPage.body.data.length, 2);
      assert.deepEqual(
        attemptsPage.body.data.map((a: any) => [a.manual, a.status_code]),
        [
          [true, 500],
          [true, 200],
        ],
      );
      assert.ok(attemptsPage.body.next_cursor);
      const rest = await s.request('GET', `/v1/webhooks/${ep.id}/attempts?limit=2&cursor=${attemptsPage.body.next_cursor}`, { token: seed.apiKey });
      assert.deepEqual(
        rest.body.data.map((a: any) => [a.attempt, a.status_code]),
        [
          [2, 500],
          [1, 500],
        ],
      );
      assert.equal(rest.body.next_cursor, null);
      assert.ok(rest.body.data.every((a: any) => a.webhook_id === entry.webhook_id && a.delivery_id === entry.delivery_id));

      const missing = await s.request('POST', `/v1/webhooks/${ep.id}/deliveries/dlv_nope/redeliver`, { token: seed.apiKey });
      assert.equal(missing.status, 404);
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('finished deliveries are kept 7 days, the newest 100 per endpoint always', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed, { events: ['message.created'] });
    const other = await endpoint(seed, { events: ['contact.updated'] });
    for (let i = 0; i < 105; i++) await emitMessage(s.app, seed.workspaceId, seed.inboxId);
    await emit(s.app, { workspaceId: seed.workspaceId, type: 'contact.updated', data: { contact: contactData() } });
    await drain();
    assert.equal((await deliveries(ep.id)).length, 105);
    clock.advance(6 * 24 * HOUR);
    await drain(); // the hourly clean-up runs: nothing is old enough yet
    assert.equal((await deliveries(ep.id)).length, 105);
    clock.advance(24 * HOUR + MINUTE);
    await drain();
    const kept = await deliveries(ep.id);
    assert.equal(kept.length, 100);
    assert.equal((await deliveries(other.id)).length, 1, 'the newest 100 of each endpoint stay');
    const log = await s.request('GET', `/v1/webhooks/${ep.id}/deliveries`, { token: seed.apiKey });
    assert.equal(log.body.data.length, 100);
    const attemptRows = await attempts(ep.id);
    assert.equal(attemptRows.length, 100, 'attempts go with their deliveries');
  });

  test('nothing more is sent for a deleted workspace', async () => {
    const seed = await seedWorkspace(s.app);
    const ep = await endpoint(seed);
    rx.handler = (r) => (r.path === ep.path ? { status: 500 } : { status: 200 });
    try {
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      await drain();
      assert.equal(at(ep.path).length, 1);
      await s.app.db.updateTable('workspaces').set({ deleted_at: clock.now().toISOString() }).where('id', '=', seed.workspaceId).execute();
      await emitMessage(s.app, seed.workspaceId, seed.inboxId);
      clock.advance(HOUR);
      await drain();
      assert.equal(at(ep.path).length, 1, 'neither the retry nor the new event was sent');
      assert.equal((await deliveries(ep.id)).length, 0);
    } finally {
      rx.handler = () => ({ status: 200, body: 'ok' });
    }
  });

  test('agents cannot manage webhooks', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const r = await s.request('POST', '/v1/webhooks', { token: agent.token, body: { url: rx.url } });
    assert.equal(r.status, 403);
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
