// Webhook payloads end to end: real server (movable clock), a receiver on 127.0.0.1, every delivery
// verified with the standardwebhooks package. What is sent to whom: the payload shape and headers,
// a burst in one batch, contact events, the event and inbox filters, the contact's online flag.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { announceEvents, recordEvent } from '../../src/events/service.js';
import { MINUTE } from '../../src/platform/clock.js';
import { closeConnection, deleteStaleConnections, markConnection, touchConnection } from '../../src/realtime/connections.js';
import { contactData, emit, emitMessage } from '../helpers/events.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { deliveryScene } from '../helpers/webhook-delivery.js';
import { type Receiver, verifyDelivery } from '../helpers/webhooks.js';

describe('webhook payloads', () => {
  let s: TestServer;
  let rx: Receiver;
  const { clock, drain, endpoint, at, deliveries, attempts } = deliveryScene((started) => ({ s, rx } = started));

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
});
