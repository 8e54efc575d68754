import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, eventsAfter, INGRESS_SECRET, lastEventSeq, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('conversations API', () => {
  let s: TestServer;
  let seed: Seed;
  let inboxB: string;
  let addressA: string;
  let addressB: string;
  let agent: { personId: string; token: string };

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' })).id;
    addressA = (await seedEmailChannel(s.app, seed)).address!;
    addressB = (await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inboxB })).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
  });
  after(() => s.stop());

  test('list: newest first, cursor pages, filters by inbox, status, assignee, label and contact', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await deliverMail(s, i < 3 ? addressA : addressB, { From: `c${i}@list.example`, Subject: `list ${i}` })).conversation_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/v1/conversations?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await s.request('GET', q, { token: seed.apiKey });
      assert.equal(page.status, 200);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((c: { id: string }) => c.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    const mine = seen.filter((id) => ids.includes(id));
    assert.deepEqual(mine, [...ids].reverse());

    const inB = await s.request('GET', `/v1/conversations?inbox_id=${inboxB}`, { token: seed.apiKey });
    assert.deepEqual(
      inB.body.data.map((c: { id: string }) => c.id),
      [ids[4], ids[3]],
    );

    await s.request('PATCH', `/v1/conversations/${ids[0]}`, {
      token: seed.apiKey,
      body: { status: 'closed', assignee_id: agent.personId, labels: ['vip', 'billing'] },
    });
    const closed = await s.request('GET', '/v1/conversations?status=closed', { token: seed.apiKey });
    assert.deepEqual(
      closed.body.data.map((c: { id: string }) => c.id),
      [ids[0]],
    );
    const assigned = await s.request('GET', `/v1/conversations?assignee_id=${agent.personId}`, { token: seed.apiKey });
    assert.deepEqual(
      assigned.body.data.map((c: { id: string }) => c.id),
      [ids[0]],
    );
    const unassigned = await s.request('GET', '/v1/conversations?assignee_id=none', { token: seed.apiKey });
    assert.ok(!unassigned.body.data.some((c: { id: string }) => c.id === ids[0]));
    const labelled = await s.request('GET', '/v1/conversations?label=vip', { token: seed.apiKey });
    assert.deepEqual(
      labelled.body.data.map((c: { id: string }) => c.id),
      [ids[0]],
    );
    assert.deepEqual(labelled.body.data[0].labels, ['billing', 'vip']);
    const one = await s.request('GET', `/v1/conversations/${ids[1]}`, { token: seed.apiKey });
    const byContact = await s.request('GET', `/v1/conversations?contact_id=${one.body.contact_id}`, { token: seed.apiKey });
    assert.deepEqual(
      byContact.body.data.map((c: { id: string }) => c.id),
      [ids[1]],
    );

    const badCursor = await s.request('GET', '/v1/conversations?cursor=nonsense', { token: seed.apiKey });
    assert.equal(badCursor.status, 400);
    const badLimit = await s.request('GET', '/v1/conversations?limit=500', { token: seed.apiKey });
    assert.equal(badLimit.status, 400);
  });

  test('PATCH changes fields, records one conversation.updated and an event message; no change, no event', async () => {
    const { conversation_id: id } = await deliverMail(s, addressA, { From: 'patch@cust.example', Subject: 'Patch me' });
    const seq = await lastEventSeq(s);
    const r = await s.request('PATCH', `/v1/conversations/${id}`, {
      token: agent.token,
      body: { status: 'pending', assignee_id: agent.personId, priority: 'high', labels: ['a', 'b', 'a'], subject: 'New subject', spam: true },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'pending');
    assert.equal(r.body.assignee_id, agent.personId);
    assert.equal(r.body.priority, 'high');
    assert.deepEqual(r.body.labels, ['a', 'b']);
    assert.equal(r.body.subject, 'New subject');
    assert.equal(r.body.spam, true);
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => e.type),
      ['conversation.updated'],
    );
    assert.equal(events[0].inbox_id, seed.inboxId);
    assert.equal(events[0].contact_id, r.body.contact_id);
    assert.equal(events[0].data.conversation.status, 'pending');
    assert.deepEqual(events[0].data.contact.emails, ['patch@cust.example']);

    const msgs = await s.request('GET', `/v1/conversations/${id}/messages`, { token: seed.apiKey });
    const ev = msgs.body.data[0];
    assert.equal(ev.kind, 'event');
    assert.deepEqual(ev.author, { type: 'member', member_id: agent.personId });
    assert.deepEqual(ev.details.changes.status, { from: 'open', to: 'pending' });

    const same = await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.apiKey, body: { status: 'pending', labels: ['b', 'a'] } });
    assert.equal(same.status, 200);
    assert.deepEqual(await eventsAfter(s, seq + 1), []);

    const outsider = await addPerson(s.app, (await seedWorkspace(s.app)).workspaceId, 'owner');
    for (const body of [{ assignee_id: outsider.personId }, { status: 'done' }, { priority: 'whenever' }, { colour: 'red' }, { labels: [''] }]) {
      const bad = await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.apiKey, body });
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(bad.body.error.code, 'invalid_request');
    }
    assert.deepEqual(await eventsAfter(s, seq + 1), []);
  });

  test('moving a conversation to another inbox switches its channel; to another contact changes the event contact', async () => {
    const { conversation_id: id } = await deliverMail(s, addressA, { From: 'mover@cust.example' });
    const moved = await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.apiKey, body: { inbox_id: inboxB } });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.inbox_id, inboxB);
    const channelB = await s.app.db.selectFrom('channels').select('id').where('inbox_id', '=', inboxB).executeTakeFirstOrThrow();
    assert.equal(moved.body.channel_id, channelB.id);

    const other = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { name: 'Other', emails: ['other-owner@cust.example'] } });
    const seq = await lastEventSeq(s);
    const r = await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.apiKey, body: { contact_id: other.body.id } });
    assert.equal(r.body.contact_id, other.body.id);
    const [event] = await eventsAfter(s, seq);
    assert.equal(event.type, 'conversation.updated');
    assert.equal(event.contact_id, other.body.id);
    assert.equal(event.inbox_id, inboxB);
    assert.equal(event.data.contact.id, other.body.id);
    const missing = await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.apiKey, body: { contact_id: 'ct_nope' } });
    assert.equal(missing.status, 404);
  });

  test('bulk update: one conversation.updated per conversation, all or nothing', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await deliverMail(s, addressA, { From: `bulk${i}@cust.example` })).conversation_id);
    const seq = await lastEventSeq(s);
    const r = await s.request('POST', '/v1/conversations/bulk-update', {
      token: seed.apiKey,
      body: { conversation_ids: ids, changes: { status: 'closed', labels: ['done'] } },
    });
    assert.equal(r.status, 200);
    assert.ok(r.body.data.every((c: { status: string }) => c.status === 'closed'));
    const events = await eventsAfter(s, seq);
    assert.equal(events.length, 3);
    assert.ok(events.every((e) => e.type === 'conversation.updated'));
    assert.deepEqual(new Set(events.map((e) => e.data.conversation.id)), new Set(ids));

    const seq2 = await lastEventSeq(s);
    const partial = await s.request('POST', '/v1/conversations/bulk-update', {
      token: seed.apiKey,
      body: { conversation_ids: [ids[0], 'cv_missing'], changes: { status: 'open' } },
    });
    assert.equal(partial.status, 404);
    assert.equal((await s.request('GET', `/v1/conversations/${ids[0]}`, { token: seed.apiKey })).body.status, 'closed');
    assert.deepEqual(await eventsAfter(s, seq2), []);
  });

  test('scopes and inbox limits apply to every conversation route', async () => {
    const inA = await deliverMail(s, addressA, { From: 'scope@cust.example' });
    const inB = await deliverMail(s, addressB, { From: 'scope@cust.example' });
    const readOnly = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'ro', scopes: ['conversations:read'] })).secret;
    const noScope = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'none', scopes: ['contacts:read'] })).secret;
    const limited = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'only A', inboxIds: [seed.inboxId] })).secret;

    assert.equal((await s.request('GET', '/v1/conversations', { token: noScope })).status, 403);
    assert.equal((await s.request('GET', '/v1/conversations', { token: readOnly })).status, 200);
    const w = await s.request('PATCH', `/v1/conversations/${inA.conversation_id}`, { token: readOnly, body: { status: 'closed' } });
    assert.equal(w.status, 403);
    assert.equal(w.body.error.code, 'forbidden');
    assert.equal(
      (await s.request('POST', `/v1/conversations/${inA.conversation_id}/messages`, { token: readOnly, body: { kind: 'note', body: 'x' } })).status,
      403,
    );

    const list = await s.request('GET', '/v1/conversations?limit=200', { token: limited });
    assert.ok(list.body.data.every((c: { inbox_id: string }) => c.inbox_id === seed.inboxId));
    assert.ok(list.body.data.some((c: { id: string }) => c.id === inA.conversation_id));
    for (const [method, path, body] of [
      ['GET', `/v1/conversations/${inB.conversation_id}`],
      ['GET', `/v1/conversations/${inB.conversation_id}/messages`],
      ['PATCH', `/v1/conversations/${inB.conversation_id}`, { status: 'closed' }],
      ['POST', `/v1/conversations/${inB.conversation_id}/messages`, { kind: 'note', body: 'x' }],
      ['GET', `/v1/conversations/${inB.conversation_id}/messages/${inB.message_id}/raw`],
      ['PATCH', `/v1/conversations/${inA.conversation_id}`, { inbox_id: inboxB }],
    ] as [string, string, unknown?][]) {
      const r = await s.request(method, path, { token: limited, body });
      assert.equal(r.status, 404, `${method} ${path}`);
    }
    const inboxes = await s.request('GET', '/v1/inboxes', { token: limited });
    assert.deepEqual(
      inboxes.body.data.map((i: { id: string }) => i.id),
      [seed.inboxId],
    );
  });

  test('the API description lists the new routes', async () => {
    const doc = await s.request('GET', '/v1/openapi.json');
    for (const p of [
      '/v1/conversations',
      '/v1/conversations/{conversationId}/messages',
      '/v1/contacts/{contactId}/merge',
      '/v1/contacts/by-external-id',
      '/v1/feedback',
      '/v1/ingress/email',
      '/v1/channels/{channelId}/forwarding-address/rotate',
      '/v1/attachments/{attachmentId}/content',
    ]) {
      assert.ok(doc.body.paths[p], p);
    }
  });
});
