// The notification inbox on the server: GET /v1/notifications (read/unread, the unread count),
// marking one or all read (told to the member's other panels by a `notification.read` event), kept
// 30 days; a member's own, never another's, never an API key's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { retentionRules } from '../../src/lifecycle/registry.js';
import { runRetention } from '../../src/lifecycle/retention.js';
import { DAY, type ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Person = { personId: string; token: string };

describe('notification inbox', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  let ann: Person;
  let bob: Person;
  let address: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    clock = s.clock as ManualClock;
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    ann = await addPerson(s.app, seed.workspaceId, 'agent');
    bob = await addPerson(s.app, seed.workspaceId, 'agent');
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(() => s?.stop());

  const list = (p: Person, query = '') => s.request('GET', `/v1/notifications${query}`, { token: p.token });
  async function newConversation(subject: string) {
    clock.advance(1000);
    const r = await deliverMail(s, address, { Subject: subject });
    await s.app.jobs.drain();
    return r.conversation_id;
  }

  test('lists the member’s notifications newest first with the unread count; filters read and unread; pages', async () => {
    const first = await newConversation('Broken printer');
    const second = await newConversation('Lost parcel');
    const third = await newConversation('Refund');
    const all = await list(ann);
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.equal(all.body.unread_count, 3);
    assert.deepEqual(
      all.body.data.map((n: any) => n.conversation_id),
      [third, second, first],
    );
    const n = all.body.data[0];
    assert.equal(n.trigger, 'new_conversation');
    assert.match(n.title, /Refund/);
    assert.equal(n.read_at, null);
    assert.equal(n.inbox_id, seed.inboxId);
    assert.ok(n.url.endsWith(`/conversations/${third}`));
    const page = await list(ann, '?limit=2');
    assert.equal(page.body.data.length, 2);
    assert.ok(page.body.next_cursor);
    const rest = await list(ann, `?limit=2&cursor=${page.body.next_cursor}`);
    assert.deepEqual(
      rest.body.data.map((x: any) => x.conversation_id),
      [first],
    );
    assert.equal(rest.body.next_cursor, null);
    assert.equal((await list(ann, '?unread=false')).body.data.length, 0);
    assert.equal((await list(ann, '?unread=true')).body.data.length, 3);
    assert.equal((await list(ann, '?unread=maybe')).status, 400);
  });

  test('marking one read: kept read, the count drops, and the member’s other panels are told; nobody else’s changes', async () => {
    const before = await list(ann);
    const bobBefore = (await list(bob)).body.unread_count;
    const target = before.body.data[1];
    const seq = Number(
      (
        await s.app.db
          .selectFrom('events')
          .select((eb) => eb.fn.max('seq').as('m'))
          .executeTakeFirstOrThrow()
      ).m ?? 0,
    );
    const r = await s.request('POST', `/v1/notifications/${target.id}/read`, { token: ann.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body.notification.read_at);
    assert.equal(r.body.unread_count, before.body.unread_count - 1);
    const after = await list(ann);
    assert.equal(after.body.unread_count, before.body.unread_count - 1);
    assert.equal(after.body.data.find((x: any) => x.id === target.id).read_at, r.body.notification.read_at);
    assert.deepEqual(
      (await list(ann, '?unread=false')).body.data.map((x: any) => x.id),
      [target.id],
    );
    // Again: the same, no second event.
    const again = await s.request('POST', `/v1/notifications/${target.id}/read`, { token: ann.token });
    assert.equal(again.body.notification.read_at, r.body.notification.read_at);
    // The stream (the realtime socket's) tells ann's panels, and only hers.
    const annEvents = (await s.request('GET', `/v1/events?after=${seq}&limit=200`, { token: ann.token })).body.data.filter(
      (e: any) => e.type === 'notification.read',
    );
    assert.equal(annEvents.length, 1);
    assert.deepEqual(annEvents[0].data, { all: false, notification_ids: [target.id], unread_count: after.body.unread_count });
    const bobEvents = (await s.request('GET', `/v1/events?after=${seq}&limit=200`, { token: bob.token })).body.data;
    assert.ok(!bobEvents.some((e: any) => e.type === 'notification.read'));
    const keyEvents = (await s.request('GET', `/v1/events?after=${seq}&limit=200`, { token: seed.apiKey })).body.data;
    assert.ok(!keyEvents.some((e: any) => e.type === 'notification.read'));
    assert.equal((await list(bob)).body.unread_count, bobBefore);
    // Someone else's notification is not found; an API key has no notifications.
    const bobs = (await list(bob)).body.data[0];
    assert.equal((await s.request('POST', `/v1/notifications/${bobs.id}/read`, { token: ann.token })).status, 404);
    assert.equal((await list(bob)).body.data[0].read_at, null);
    assert.equal((await s.request('POST', '/v1/notifications/ntf_unknown/read', { token: ann.token })).status, 404);
    const byKey = await s.request('GET', '/v1/notifications', { token: seed.apiKey });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.code, 'forbidden');
    assert.equal((await s.request('POST', '/v1/notifications/read', { token: seed.apiKey })).status, 403);
  });

  test('mark all read: the count is 0 on every device; a new one is unread again', async () => {
    const r = await s.request('POST', '/v1/notifications/read', { token: ann.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.marked, 2);
    assert.equal(r.body.unread_count, 0);
    assert.equal((await list(ann)).body.unread_count, 0);
    assert.equal((await list(ann, '?unread=true')).body.data.length, 0);
    assert.equal((await list(bob)).body.unread_count, 3, 'bob’s stay unread');
    const none = await s.request('POST', '/v1/notifications/read', { token: ann.token });
    assert.equal(none.body.marked, 0);
    await newConversation('One more');
    assert.equal((await list(ann)).body.unread_count, 1);
  });

  test('the bell shows only what the member wants in the panel; what they no longer see is left out', async () => {
    const off = await s.request('PATCH', '/v1/me/notification-preferences', { token: ann.token, body: { new_conversation: { realtime: false } } });
    assert.equal(off.status, 200);
    const before = (await list(ann)).body.unread_count;
    await newConversation('Not in the panel');
    assert.equal((await list(ann)).body.unread_count, before, 'not shown under the bell');
    await s.request('PATCH', '/v1/me/notification-preferences', { token: ann.token, body: { new_conversation: { realtime: true } } });
    // Limited to another inbox: the notifications about this one are hidden (and not counted).
    const other = await s.request('POST', '/v1/inboxes', { token: seed.ownerToken, body: { name: 'Elsewhere' } });
    const member = (await s.request('GET', '/v1/members', { token: seed.ownerToken })).body.data.find((m: any) => m.person_id === ann.personId);
    const limited = await s.request('PATCH', `/v1/members/${member.id}`, { token: seed.ownerToken, body: { inbox_ids: [other.body.id] } });
    assert.equal(limited.status, 200, JSON.stringify(limited.body));
    const hidden = await list(ann);
    assert.equal(hidden.body.unread_count, 0);
    assert.deepEqual(hidden.body.data, []);
    await s.request('PATCH', `/v1/members/${member.id}`, { token: seed.ownerToken, body: { inbox_ids: null } });
    assert.ok((await list(ann)).body.data.length > 0);
  });

  test('kept 30 days: the retention rule removes older notifications', async () => {
    const count = async () => (await s.app.db.selectFrom('notifications').select('id').where('person_id', '=', bob.personId).execute()).length;
    assert.ok((await count()) > 0);
    clock.advance(29 * DAY);
    await runRetention(
      s.app,
      retentionRules.filter((r) => r.name === 'notifications'),
    );
    assert.ok((await count()) > 0, 'kept within 30 days');
    clock.advance(2 * DAY);
    await runRetention(
      s.app,
      retentionRules.filter((r) => r.name === 'notifications'),
    );
    assert.equal(await count(), 0);
  });
});
