// Webhook secrets and records end to end: real server (movable clock), a receiver on 127.0.0.1.
// Secret rotation, the delivery and attempt logs with redelivery, how long deliveries are kept,
// nothing sent for a deleted workspace, and who may manage webhooks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HOUR, MINUTE } from '../../src/platform/clock.js';
import { contactData, emit, emitMessage } from '../helpers/events.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { deliveryScene } from '../helpers/webhook-delivery.js';
import { type Receiver, verifyDelivery } from '../helpers/webhooks.js';

describe('webhook secrets, logs and retention', () => {
  let s: TestServer;
  let rx: Receiver;
  const { clock, drain, endpoint, at, deliveries, attempts } = deliveryScene((started) => ({ s, rx } = started));

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
