// The events of conversations, messages, feedback and contacts reach webhook endpoints end to end:
// inbound mail, replies, notes, PATCH, feedback, contact changes; signatures checked with standardwebhooks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

describe('webhooks for conversation, message, feedback and contact events', () => {
  let s: TestServer;
  let clock: ManualClock;
  let rx: Receiver;
  let sink: SmtpSink;
  let seed: Seed;
  let inboxB: string;
  let address: string;
  let addressB: string;

  before(async () => {
    clock = new ManualClock('2030-01-01T00:00:00Z');
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    rx = await startReceiver();
    seed = await seedWorkspace(s.app);
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'B' })).id;
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    addressB = (await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inboxB })).address!;
  });
  after(async () => {
    await rx.close();
    await s.stop();
    await sink.close();
  });

  async function endpoint(body: Record<string, unknown>) {
    const path = `/${Math.random().toString(36).slice(2)}`;
    const r = await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: rx.url + path, ...body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { path, secret: r.body.secret as string };
  }
  // Deliveries run concurrently and may arrive out of order (spec); a webhook-id is made from its
  // event's time-sortable id, so sorting by it gives the order the events happened in.
  const payloads = (ep: { path: string; secret: string }) =>
    rx.received
      .filter((r) => r.path === ep.path)
      .sort((a, b) => (String(a.headers['webhook-id']) < String(b.headers['webhook-id']) ? -1 : 1))
      .map((r) => verifyDelivery(r, ep.secret, clock));

  test('mail, reply, note, PATCH and feedback produce the spec’s events with their data keys', async () => {
    const all = await endpoint({ events: ['conversation.created', 'conversation.updated', 'message.created', 'feedback.created'] });
    const withNotes = await endpoint({ events: ['message.created'], include_notes: true });
    const onlyB = await endpoint({ events: ['conversation.created'], inbox_id: inboxB });

    const mail = await deliverMail(s, address, { From: 'Hook <hook@cust.example>', Subject: 'Hooked' });
    await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'reply' } });
    await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, { token: seed.apiKey, body: { kind: 'note', body: 'note' } });
    await s.request('PATCH', `/v1/conversations/${mail.conversation_id}`, { token: seed.apiKey, body: { status: 'closed' } });
    const fb = await s.request('POST', '/v1/feedback', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, body: 'Great', contact: { email: 'hook@cust.example' } },
    });
    await s.app.jobs.drain();

    const got = payloads(all);
    assert.deepEqual(
      got.map((p) => p.type),
      ['conversation.created', 'message.created', 'message.created', 'conversation.updated', 'conversation.created', 'message.created', 'feedback.created'],
    );
    for (const p of got) {
      assert.equal(p.workspace_id, seed.workspaceId);
      assert.equal(p.inbox_id, seed.inboxId);
      assert.equal(p.data.contact.online, false);
      assert.deepEqual(p.data.contact.emails, ['hook@cust.example']);
    }
    assert.deepEqual(Object.keys(got[0].data).sort(), ['contact', 'conversation']);
    assert.deepEqual(Object.keys(got[1].data).sort(), ['contact', 'conversation', 'message']);
    assert.equal(got[1].data.message.direction, 'in');
    assert.equal(got[2].data.message.direction, 'out');
    assert.equal(got[2].data.message.status, 'pending');
    assert.equal(got[3].data.conversation.status, 'closed');
    assert.equal(got[6].data.message.id, fb.body.message.id);
    assert.ok(!got.some((p) => p.data.message?.kind === 'note' || p.data.message?.kind === 'event'));

    const notes = payloads(withNotes);
    assert.ok(notes.some((p) => p.data.message.kind === 'note'));
    assert.ok(!notes.some((p) => p.data.message.kind === 'event'), 'internal events are never sent as messages');
    assert.deepEqual(payloads(onlyB), [], 'an inbox-limited endpoint gets only its inbox’s conversations');
  });

  test('contact events: no inbox_id, to inbox-limited endpoints where the contact has a conversation or an external id', async () => {
    const wide = await endpoint({ events: ['contact.updated', 'contact.deleted'] });
    const onlyB = await endpoint({ events: ['contact.updated', 'contact.deleted'], inbox_id: inboxB });
    const onlyA = await endpoint({ events: ['contact.updated'], inbox_id: seed.inboxId });

    const inB = await deliverMail(s, addressB, { From: 'b-person@cust.example' });
    const contactId = (await s.request('GET', `/v1/conversations/${inB.conversation_id}`, { token: seed.apiKey })).body.contact_id;
    await s.request('PATCH', `/v1/contacts/${contactId}`, { token: seed.apiKey, body: { name: 'B Person' } });
    await s.request('DELETE', `/v1/contacts/${contactId}`, { token: seed.apiKey });
    await s.app.jobs.drain();

    for (const ep of [wide, onlyB]) {
      const got = payloads(ep);
      assert.deepEqual(
        got.map((p) => p.type),
        ['contact.updated', 'contact.deleted'],
      );
      for (const p of got) {
        assert.equal('inbox_id' in p, false);
        assert.equal(p.data.contact.id, contactId);
      }
    }
    assert.deepEqual(payloads(onlyA), []);
  });
});
