// What the panel's list needs from GET /v1/conversations: latest activity first, the contact, the
// start of the latest message, and unread state per member. (That imported mail is never unread is
// checked in test/mailbox-migration/flow-copy.test.ts, after a real copy.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, eventsAfter, INGRESS_SECRET, lastEventSeq, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';

describe('conversation list for the panel', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  const clock = new ManualClock(new Date('2031-03-01T10:00:00Z'));

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET }, clock });
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(() => s.stop());

  test('sort=activity puts the conversation with the latest message first and pages by cursor', async () => {
    const a = await deliverMail(s, address, { From: 'Ann <ann@order.example>', Subject: 'first' }, 'One\r\n');
    clock.advance(60_000);
    const b = await deliverMail(s, address, { From: 'bob@order.example', Subject: 'second' }, 'Two\r\n');
    clock.advance(60_000);
    await deliverMail(
      s,
      address,
      { From: 'Ann <ann@order.example>', Subject: 'Re: first', 'In-Reply-To': await messageIdOf(a.conversation_id) },
      'Three, later\r\n',
    );

    const byCreated = await s.request('GET', '/v1/conversations?limit=2', { token: seed.ownerToken });
    assert.deepEqual(byCreated.body.data.map((c: { id: string }) => c.id).slice(0, 2), [b.conversation_id, a.conversation_id]);

    const first = await s.request('GET', '/v1/conversations?sort=activity&limit=1', { token: seed.ownerToken });
    assert.equal(first.status, 200);
    assert.equal(first.body.data[0].id, a.conversation_id);
    assert.deepEqual(first.body.data[0].contact, { id: first.body.data[0].contact_id, name: 'Ann', email: 'ann@order.example' });
    assert.equal(first.body.data[0].preview, 'Three, later');
    const second = await s.request('GET', `/v1/conversations?sort=activity&limit=1&cursor=${first.body.next_cursor}`, { token: seed.ownerToken });
    assert.equal(second.body.data[0].id, b.conversation_id);
    assert.equal(second.body.data[0].preview, 'Two');

    const bad = await s.request('GET', '/v1/conversations?sort=activity&cursor=nonsense', { token: seed.ownerToken });
    assert.equal(bad.status, 400);
  });

  test('unread per member until they open it after the last customer message; keys never see unread', async () => {
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const c = await deliverMail(s, address, { From: 'carol@unread.example', Subject: 'unread' });
    const unreadFor = async (token: string) =>
      (await s.request('GET', '/v1/conversations?sort=activity&limit=200', { token })).body.data.find((x: { id: string }) => x.id === c.conversation_id).unread;
    assert.equal(await unreadFor(seed.ownerToken), true);
    assert.equal(await unreadFor(agent.token), true);
    assert.equal(await unreadFor(seed.apiKey), false);

    clock.advance(1000);
    const read = await s.request('POST', `/v1/conversations/${c.conversation_id}/read`, { token: agent.token });
    assert.equal(read.status, 200);
    assert.equal(await unreadFor(agent.token), false);
    assert.equal(await unreadFor(seed.ownerToken), true, 'reading is per member');

    // The team's own reply does not make it unread again; the customer's next message does.
    clock.advance(1000);
    const note = await s.request('POST', `/v1/conversations/${c.conversation_id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'note', body: 'looking' },
    });
    assert.equal(note.status, 201);
    assert.equal(await unreadFor(agent.token), false);
    clock.advance(1000);
    await deliverMail(s, address, { From: 'carol@unread.example', Subject: 'Re: unread', 'In-Reply-To': await messageIdOf(c.conversation_id) });
    assert.equal(await unreadFor(agent.token), true);

    const overview = (token: string) => s.request('GET', '/v1/overview', { token }).then((r) => r.body.unread);
    const agentCounts = await overview(agent.token);
    assert.ok(agentCounts.all >= 1 && agentCounts.unassigned >= 1 && agentCounts.inboxes[seed.inboxId] >= 1);
    assert.equal(agentCounts.mine, 0);
    await s.request('PATCH', `/v1/conversations/${c.conversation_id}`, { token: seed.ownerToken, body: { assignee_id: agent.personId } });
    const assigned = await overview(agent.token);
    assert.equal(assigned.mine, 1);
    assert.equal(assigned.unassigned, agentCounts.unassigned - 1);
    await s.request('POST', `/v1/conversations/${c.conversation_id}/read`, { token: agent.token });
    assert.equal((await overview(agent.token)).mine, 0, 'reading it clears the count');
    assert.deepEqual(await overview(seed.apiKey), { all: 0, mine: 0, unassigned: 0, inboxes: {} });
    await s.request('PATCH', `/v1/conversations/${c.conversation_id}`, { token: seed.ownerToken, body: { labels: ['billing', 'vip'] } });
    const labels = (await s.request('GET', '/v1/overview', { token: agent.token })).body.labels;
    assert.deepEqual(labels, [
      { label: 'billing', open: 1 },
      { label: 'vip', open: 1 },
    ]);
    await s.request('PATCH', `/v1/conversations/${c.conversation_id}`, { token: seed.ownerToken, body: { status: 'closed' } });
    assert.deepEqual((await s.request('GET', '/v1/overview', { token: agent.token })).body.labels, [], 'only open conversations count');
    await s.request('PATCH', `/v1/conversations/${c.conversation_id}`, { token: seed.ownerToken, body: { status: 'open' } });

    assert.equal((await s.request('POST', `/v1/conversations/${c.conversation_id}/read`, { token: seed.apiKey })).status, 403);
    assert.equal((await s.request('POST', '/v1/conversations/cv_missing/read', { token: agent.token })).status, 404);
  });

  test('a reply that was sent or failed for good reaches open panels as message.updated, never as a webhook', async () => {
    const sink = await startSmtpSink(SINK_LOGIN);
    try {
      const sending = await seedEmailChannel(s.app, seed, { smtpPort: sink.port });
      const c = await deliverMail(s, sending.address!, { From: 'dora@sent.example', Subject: 'status' });
      await s.request('POST', '/v1/webhooks', { token: seed.apiKey, body: { url: 'https://hooks.example.com/x' } });
      const before = await lastEventSeq(s);
      const reply = await s.request('POST', `/v1/conversations/${c.conversation_id}/messages`, { token: seed.ownerToken, body: { body: 'On its way.' } });
      assert.equal(reply.body.status, 'pending');
      await s.app.jobs.drain();
      await sink.waitFor(1);
      // The job records the state after the mail server's answer; wait for it (bounded).
      let updated: Awaited<ReturnType<typeof eventsAfter>> = [];
      for (let i = 0; i < 100 && updated.length === 0; i++) {
        updated = (await eventsAfter(s, before)).filter((e) => e.type === 'message.updated');
        if (!updated.length) await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(updated.length, 1);
      assert.equal(updated[0].data.message.id, reply.body.id);
      assert.equal(updated[0].data.message.status, 'sent');
      assert.ok(updated[0].data.message.sent_at);
      const row = await s.app.db.selectFrom('events').select('webhook').where('type', '=', 'message.updated').executeTakeFirstOrThrow();
      assert.equal(row.webhook, 0, 'not a webhook event');
      const deliveries = await s.app.db
        .selectFrom('webhook_deliveries')
        .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
        .select('events.type')
        .execute();
      assert.ok(!deliveries.some((d) => d.type === 'message.updated'));
    } finally {
      await sink.close();
    }
  });

  test('the HTML of a message as a sandboxed page: no scripts, inline images from its attachments, remote images only when asked', async () => {
    const raw = [
      `From: h@html.example`,
      `To: ${address}`,
      'Subject: html',
      'Message-ID: <html-1@html.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/related; boundary="b"',
      '',
      '--b',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Hi</p><img src="cid:logo@x"><img src="https://tracker.example/p.gif">',
      '--b',
      'Content-Type: image/gif',
      'Content-ID: <logo@x>',
      'Content-Disposition: inline; filename="logo.gif"',
      'Content-Transfer-Encoding: base64',
      '',
      'R0lGODlhAQABAAAAACwAAAAAAQABAAA=',
      '--b--',
      '',
    ].join('\r\n');
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { token: INGRESS_SECRET, raw: Buffer.from(raw) });
    assert.equal(r.status, 201);
    const { conversation_id, message_id } = r.body.data[0];
    const page = await fetch(`${s.url}/v1/conversations/${conversation_id}/messages/${message_id}/html`, {
      headers: { authorization: `Bearer ${seed.ownerToken}` },
    });
    assert.equal(page.status, 200);
    const csp = page.headers.get('content-security-policy')!;
    assert.match(csp, /sandbox/);
    assert.match(csp, /img-src 'self' data:;/, 'no remote images by default');
    assert.doesNotMatch(csp, /script-src/);
    assert.equal(page.headers.get('x-frame-options'), 'SAMEORIGIN');
    const body = await page.text();
    // The frame needs no credentials for an inline image: the part itself, as a data: URL (issue 43 item 3).
    assert.match(body, /<img src="data:image\/gif;base64,R0lGODlhAQABAAAAACwAAAAAAQABAAA=" \/><img src="https:\/\/tracker\.example\/p\.gif" \/>/);
    assert.match(csp, /sandbox allow-same-origin allow-popups/, 'same origin (the panel sizes the frame), nothing runs');
    const remote = await fetch(`${s.url}/v1/conversations/${conversation_id}/messages/${message_id}/html?remote_images=true`, {
      headers: { authorization: `Bearer ${seed.ownerToken}` },
    });
    assert.match(remote.headers.get('content-security-policy')!, /img-src 'self' data: https: http:;/);
    const note = await s.request('POST', `/v1/conversations/${conversation_id}/messages`, { token: seed.ownerToken, body: { kind: 'note', body: 'plain' } });
    assert.equal((await s.request('GET', `/v1/conversations/${conversation_id}/messages/${note.body.id}/html`, { token: seed.ownerToken })).status, 404);
    assert.equal((await s.request('GET', `/v1/conversations/${conversation_id}/messages/${message_id}/html`)).status, 401);
  });

  async function messageIdOf(conversationId: string): Promise<string> {
    const row = await s.app.db.selectFrom('mail_ids').select('rfc_id').where('conversation_id', '=', conversationId).executeTakeFirstOrThrow();
    return `<${row.rfc_id}>`;
  }
});
