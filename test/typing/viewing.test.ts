// Viewing presence for collision warnings: a member who opens a conversation is announced to the
// team's realtime stream as a realtime-only `viewing` event (member id, name, expiry), a leave signal
// ends it at once, signals are throttled, scoped to the conversation's inbox like other conversation
// events, never delivered as webhooks or shown to the visitor, and removed after 10 minutes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { streamPosition } from '../../src/events/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { retentionRules } from '../../src/lifecycle/registry.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { VIEWING_MIN_INTERVAL_MS, VIEWING_SHOWN_MS } from '../../src/typing/viewing.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('viewing presence', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  let address: string;
  let otherAddress: string;
  let ayse: { personId: string; token: string };

  before(async () => {
    clock = new ManualClock('2026-06-01T09:00:00Z');
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
    const other = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' });
    otherAddress = (await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: other.id })).address!;
    ayse = await addPerson(s.app, seed.workspaceId, 'agent');
    await s.app.db.updateTable('people').set({ name: 'Ayşe' }).where('id', '=', ayse.personId).execute();
  });
  after(() => s.stop());

  const viewingRows = () =>
    s.app.db.selectFrom('events').selectAll().where('type', '=', 'viewing').where('workspace_id', '=', seed.workspaceId).orderBy('seq').execute();
  const signal = (method: 'POST' | 'DELETE', conversationId: string, token: string) =>
    s.request(method, `/v1/conversations/${conversationId}/viewing`, { token, headers: { 'svc-workspace': seed.workspaceId } });

  test('open, repeat, leave: realtime-only events with the member and an expiry, throttled, no webhook, no message', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'buyer@cust.example', Subject: 'Where is my order?' });
    const messagesBefore = await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', id).execute();
    const before = (await viewingRows()).length;

    const first = await signal('POST', id, ayse.token);
    assert.equal(first.status, 200);
    assert.equal(first.body.stored, true);
    assert.equal(first.body.until, new Date(clock.now().getTime() + VIEWING_SHOWN_MS).toISOString());
    assert.deepEqual(first.body.viewers, [], 'nobody else is here yet');
    // The owner opens it next: the answer names Ayşe, who was already viewing.
    const owner = await signal('POST', id, seed.ownerToken);
    assert.deepEqual(owner.body.viewers, [{ member_id: ayse.personId, name: 'Ayşe', until: first.body.until }]);
    clock.advance(1000);
    const repeat = await signal('POST', id, ayse.token);
    assert.equal(repeat.body.stored, false, 'a repeat within the interval is not stored');
    assert.deepEqual(
      repeat.body.viewers.map((v: any) => v.member_id),
      [seed.ownerId],
      'but still answers who else is here',
    );
    clock.advance(VIEWING_MIN_INTERVAL_MS);
    assert.equal((await signal('POST', id, ayse.token)).body.stored, true);

    const left = await signal('DELETE', id, ayse.token);
    assert.equal(left.status, 200);
    assert.equal(left.body.stored, true);
    assert.equal(left.body.until, clock.now().toISOString());
    assert.deepEqual(left.body.viewers, []);
    assert.deepEqual((await signal('POST', id, seed.ownerToken)).body.viewers, [], 'Ayşe left (and the caller is never listed)');
    assert.equal((await signal('POST', id, ayse.token)).body.stored, true, 'after leaving, coming back is announced at once');
    assert.deepEqual(
      (await signal('POST', id, seed.ownerToken)).body.viewers.map((v: any) => v.member_id),
      [ayse.personId],
    );
    clock.advance(VIEWING_SHOWN_MS);
    assert.deepEqual((await signal('POST', id, seed.ownerToken)).body.viewers, [], 'a signal past its until is not listed');

    const rows = (await viewingRows()).slice(before);
    const data = rows.map((r) => JSON.parse(r.data));
    const ayses = data.filter((d) => d.viewer.member_id === ayse.personId);
    assert.equal(ayses.length, 4);
    assert.deepEqual(ayses[0].viewer, { type: 'member', member_id: ayse.personId, name: 'Ayşe' });
    assert.equal(ayses[0].conversation.id, id);
    assert.equal(ayses[0].left, false);
    assert.equal(ayses[2].left, true);
    assert.ok(rows.every((r) => r.webhook === 0));
    const deliveries = await s.app.db
      .selectFrom('webhook_deliveries')
      .select('event_seq')
      .where(
        'event_seq',
        'in',
        rows.map((r) => r.seq),
      )
      .execute();
    assert.deepEqual(deliveries, []);
    const messagesAfter = await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', id).execute();
    assert.equal(messagesAfter.length, messagesBefore.length, 'never stored as conversation history');

    // The team's stream shows it, as /v1/events and over the realtime socket. Readers resume by stream
    // position, which Postgres assigns at commit, so it need not follow seq.
    const firstPosition = Math.min(...rows.map(streamPosition));
    const events = await s.request('GET', `/v1/events?after=${firstPosition - 1}`, { token: seed.ownerToken, headers: { 'svc-workspace': seed.workspaceId } });
    assert.ok(events.body.data.some((e: any) => e.type === 'viewing' && e.data.viewer.member_id === ayse.personId && e.data.conversation.id === id));
  });

  test('the owner’s socket gets the viewing event live; an agent limited to another inbox never does', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'live@cust.example', Subject: 'Live' });
    const limited = await addPerson(s.app, seed.workspaceId, 'agent');
    const billing = await s.app.db
      .selectFrom('inboxes')
      .select('id')
      .where('workspace_id', '=', seed.workspaceId)
      .where('name', '=', 'Billing')
      .executeTakeFirstOrThrow();
    await s.app.db
      .updateTable('memberships')
      .set({ inbox_ids: JSON.stringify([billing.id]) })
      .where('person_id', '=', limited.personId)
      .execute();

    const owner = await openSocket(seed.ownerToken);
    const outsider = await openSocket(limited.token);
    clock.advance(VIEWING_MIN_INTERVAL_MS);
    assert.equal((await signal('POST', id, ayse.token)).status, 200);
    // A marker the limited agent does see, so "nothing arrived" is not just "not yet".
    const { conversation_id: marker } = await deliverMail(s, otherAddress, { From: 'marker@cust.example', Subject: 'Marker' });
    await waitFor(() => owner.frames.some((f) => f.type === 'event' && f.event.type === 'viewing' && f.event.data.conversation.id === id));
    await waitFor(() => outsider.frames.some((f) => f.type === 'event' && f.event.data?.conversation?.id === marker));
    assert.equal(outsider.frames.filter((f) => f.type === 'event' && f.event.type === 'viewing').length, 0);
    const shown = owner.frames.find((f) => f.type === 'event' && f.event.type === 'viewing')!.event;
    assert.equal(shown.data.viewer.name, 'Ayşe');
    assert.equal(typeof shown.data.until, 'string');
    owner.ws.close();
    outsider.ws.close();

    // And the limited agent cannot signal in a conversation outside their inbox.
    assert.equal((await signal('POST', id, limited.token)).status, 404);
  });

  test('refusals: unknown conversation, another workspace, an API key', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'refuse@cust.example' });
    assert.equal((await signal('POST', 'cv_nope', seed.ownerToken)).status, 404);
    const other = await seedWorkspace(s.app);
    assert.equal((await s.request('POST', `/v1/conversations/${id}/viewing`, { token: other.ownerToken })).status, 404);
    const byKey = await s.request('POST', `/v1/conversations/${id}/viewing`, { token: seed.apiKey });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.code, 'forbidden');
    assert.equal((await s.request('DELETE', `/v1/conversations/${id}/viewing`, { token: seed.apiKey })).status, 403);
    assert.equal((await s.request('POST', `/v1/conversations/${id}/viewing`)).status, 401);
  });

  test('the retention rule removes viewing signals older than 10 minutes and nothing else', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'later@cust.example' });
    clock.advance(VIEWING_MIN_INTERVAL_MS);
    await signal('POST', id, ayse.token);
    const othersBefore = await s.app.db.selectFrom('events').select('seq').where('type', '!=', 'viewing').where('person_id', 'is', null).execute();
    assert.ok((await viewingRows()).length > 0);
    clock.advance(10 * MINUTE + 1000);
    const rule = retentionRules.find((r) => r.name === 'viewing_signals')!;
    await rule.deleteBatch(s.app, clock.now(), 500);
    assert.deepEqual(await viewingRows(), []);
    const othersAfter = await s.app.db.selectFrom('events').select('seq').where('type', '!=', 'viewing').where('person_id', 'is', null).execute();
    assert.equal(othersAfter.length, othersBefore.length);
  });

  async function openSocket(token: string) {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime?workspace=${seed.workspaceId}`, { headers: { authorization: `Bearer ${token}` } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => frames.some((f) => f.type === 'live'));
    return { ws, frames };
  }
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
