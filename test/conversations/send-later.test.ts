// Undo send and send later (issue 34): replies, forwards and new conversations with `send_at` are
// held as `scheduled`; the stored job hands them to sending at their time exactly once, and
// message.created (webhooks) fires only then. Cancel before: nothing is mailed, the text comes
// back; after: 409. Jobs run only when the test drains them, on a moved clock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { sendScheduledMessage } from '../../src/conversations/send-later.js';
import { createSession, findOrCreatePerson } from '../../src/people/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { type ChildServer, runSvc, spawnServer, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

describe('undo send and send later', () => {
  let s: TestServer;
  let clock: ManualClock;
  let rx: Receiver;
  let sink: SmtpSink;
  let seed: Seed;
  let address: string;
  let hook: { path: string; secret: string };

  before(async () => {
    clock = new ManualClock('2030-01-01T00:00:00Z');
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock, env: { SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    rx = await startReceiver();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    const r = await s.request('POST', '/v1/webhooks', {
      token: seed.apiKey,
      body: { url: `${rx.url}/hook`, events: ['message.created', 'conversation.created'] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    hook = { path: '/hook', secret: r.body.secret };
  });
  after(async () => {
    await rx.close();
    await s.stop();
    await sink.close();
  });

  const hooked = (messageId: string) =>
    rx.received
      .filter((r) => r.path === hook.path && r.body.includes(messageId))
      .map((r) => verifyDelivery(r, hook.secret, clock))
      .filter((p) => p.data.message.id === messageId);
  const later = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();

  test('undo within the delay: nothing is mailed, no webhook, the text comes back; the job finds nothing', async () => {
    const mail = await deliverMail(s, address, { From: 'Ada <ada@cust.example>', Subject: 'Undo me' });
    // The stored reply carries the inbox's signature; what comes back is the text as written.
    const signed = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, { token: seed.apiKey, body: { body: 'The support team' } });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const before = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { html: '<p>Oops, <b>wrong</b> one</p>', send_at: later(10_000) },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.status, 'scheduled');
    assert.equal(r.body.send_at, later(10_000));
    await s.app.jobs.drain();
    const cancelled = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.body, 'Oops, wrong one');
    assert.equal(cancelled.body.html, '<p>Oops, <b>wrong</b> one</p>');
    assert.deepEqual(
      cancelled.body.to.map((t: { address: string }) => t.address),
      ['ada@cust.example'],
    );
    clock.advance(60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'the smtp sink stays empty');
    assert.deepEqual(hooked(r.body.id), [], 'no message.created webhook');
    const gone = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(gone.status, 404);
    // Twice: the message is gone.
    const again = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(again.status, 404);
    await s.request('PUT', `/v1/inboxes/${seed.inboxId}/signature`, { token: seed.apiKey, body: { body: '' } });
  });

  test('a scheduled reply goes out at its time exactly once, message.created fires then; cancel afterwards is 409', async () => {
    const mail = await deliverMail(s, address, { From: 'Bo <bo@cust.example>', Subject: 'Later' });
    const before = sink.messages.length;
    const at = later(3 * 60 * 60_000);
    const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Good morning!', send_at: at },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.status, 'scheduled');
    clock.advance(3 * 60 * 60_000 - 1000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing before its time');
    assert.deepEqual(hooked(r.body.id), []);
    const listed = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(listed.body.status, 'scheduled');
    assert.equal(listed.body.send_at, at);

    clock.advance(1000);
    await s.app.jobs.drain();
    const got = await sink.waitFor(before + 1);
    assert.equal(got[before].parsed.text!.trim().startsWith('Good morning!'), true);
    const hooks = hooked(r.body.id);
    assert.equal(hooks.length, 1, 'message.created once, when handed to sending');
    assert.equal(hooks[0].type, 'message.created');
    const sent = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(sent.body.status, 'sent');
    assert.equal(sent.body.send_at, null);

    // The job run again (another process, a kill -9 before it ended) hands nothing over twice.
    assert.deepEqual(await sendScheduledMessage(s.app, r.body.id), { done: 'not_scheduled' });
    clock.advance(60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before + 1, 'exactly once');
    assert.equal(rx.received.filter((d) => d.path === hook.path && d.body.includes(r.body.id)).length, 1);

    const late = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'message_state');
  });

  test('"unless the customer answers first": kept back as a note and its author told when the customer wrote; sent when not', async () => {
    const mail = await deliverMail(s, address, { From: 'Cy <cy@cust.example>', Subject: 'Follow up', 'Message-ID': '<cy-1@cust.example>' });
    const before = sink.messages.length;
    const schedule = (body: string) =>
      s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
        token: seed.apiKey,
        body: { body, send_at: later(24 * 60 * 60_000), unless_customer_replies: true, member_id: seed.ownerId },
      });
    const r = await schedule('Any news?');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.details.unless_customer_replies, true);
    // Without send_at it means nothing: refused, naming the field.
    const bare = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'x', unless_customer_replies: true },
    });
    assert.equal(bare.status, 400);
    assert.equal(bare.body.error.issues[0].path, 'unless_customer_replies');

    clock.advance(60 * 60_000);
    await deliverMail(s, address, { From: 'Cy <cy@cust.example>', Subject: 'Re: Follow up', 'In-Reply-To': '<cy-1@cust.example>' }, 'Sorted it myself, thanks');
    clock.advance(23 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing mailed');
    const kept = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(kept.body.kind, 'note');
    assert.equal(kept.body.status, null);
    assert.equal(kept.body.details.held, 'customer_replied');
    assert.equal(kept.body.body, 'Any news?');
    const told = await s.app.db
      .selectFrom('notifications')
      .select(['person_id', 'trigger'])
      .where('conversation_id', '=', mail.conversation_id)
      .where('trigger', '=', 'reply_held')
      .execute();
    assert.deepEqual(told, [{ person_id: seed.ownerId, trigger: 'reply_held' }], 'its author is told, once');
    // It became a note: endpoints without include_notes (this one) hear nothing of it.
    assert.deepEqual(hooked(r.body.id), []);
    const noted = await s.app.db.selectFrom('events').select('type').where('type', '=', 'message.created').where('data', 'like', `%${r.body.id}%`).execute();
    assert.equal(noted.length, 1, 'message.created once, for the note');
    assert.deepEqual(await sendScheduledMessage(s.app, r.body.id), { done: 'not_scheduled' });

    // The customer wrote nothing after this one: it goes as any scheduled reply.
    const quiet = await schedule('Checking in');
    clock.advance(24 * 60 * 60_000);
    await s.app.jobs.drain();
    await sink.waitFor(before + 1);
    const sent = await s.request('GET', `/v1/conversations/${mail.conversation_id}/messages/${quiet.body.id}`, { token: seed.apiKey });
    assert.equal(sent.body.kind, 'message');
    assert.equal(sent.body.status, 'sent');
  });

  test('a scheduled reply moves to another time, sooner or later, until it goes; then 409', async () => {
    const mail = await deliverMail(s, address, { From: 'Di <di@cust.example>', Subject: 'Move me' });
    const before = sink.messages.length;
    const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Moved reply', send_at: later(5 * 60 * 60_000) },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const move = (sendAt: string) =>
      s.request('PATCH', `/v1/conversations/${mail.conversation_id}/messages/${r.body.id}/schedule`, { token: seed.apiKey, body: { send_at: sendAt } });
    const bad = await move('tomorrow');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.issues[0].path, 'send_at');
    // Later first: at the old time nothing goes.
    const laterOne = await move(later(10 * 60 * 60_000));
    assert.equal(laterOne.status, 200, JSON.stringify(laterOne.body));
    assert.equal(laterOne.body.send_at, later(10 * 60 * 60_000));
    clock.advance(6 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'not at the old time');
    // Then sooner than that: it goes at the new time, once.
    const sooner = await move(later(60 * 60_000));
    assert.equal(sooner.status, 200);
    clock.advance(60 * 60_000);
    await s.app.jobs.drain();
    await sink.waitFor(before + 1);
    clock.advance(10 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before + 1, 'exactly once');
    const late = await move(later(60 * 60_000));
    assert.equal(late.status, 409);
    assert.equal(late.body.error.code, 'message_state');
  });

  test('forward and new conversation take send_at too', async () => {
    const mail = await deliverMail(s, address, { From: 'Cy <cy@cust.example>', Subject: 'Fwd me' });
    const before = sink.messages.length;
    const fwd = await s.request('POST', `/v1/conversations/${mail.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: mail.message_id, to: ['billing@partner.example'], send_at: later(5000) },
    });
    assert.equal(fwd.status, 201, JSON.stringify(fwd.body));
    assert.equal(fwd.body.status, 'scheduled');
    const start = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: ['dee@cust.example'], subject: 'Hello', body: 'First words', send_at: later(5000) },
    });
    assert.equal(start.status, 201, JSON.stringify(start.body));
    assert.equal(start.body.message.status, 'scheduled');
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before);
    clock.advance(5000);
    await s.app.jobs.drain();
    const got = await sink.waitFor(before + 2);
    assert.deepEqual(
      got
        .slice(before)
        .flatMap((m) => m.to)
        .sort(),
      ['billing@partner.example', 'dee@cust.example'],
    );
    assert.equal(hooked(fwd.body.id).length, 1);
    assert.equal(hooked(start.body.message.id).length, 1);
  });

  /** The verified deliveries that speak of this conversation (created, or a message in it). */
  const hooksOfConversation = (conversationId: string) =>
    rx.received
      .filter((r) => r.path === hook.path && r.body.includes(conversationId))
      .map((r) => verifyDelivery(r, hook.secret, clock))
      .filter((p) => p.data.conversation?.id === conversationId);

  test('a held new conversation: announced only when handed over; undo removes it whole, its files back in the inbox', async () => {
    const before = sink.messages.length;
    const up = await s.request('POST', `/v1/inboxes/${seed.inboxId}/attachments?filename=offer.txt`, {
      token: seed.apiKey,
      raw: Buffer.from('The offer'),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const conversationsOf = async () =>
      (await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute()).map((r) => r.id).sort();
    const pendingCount = async () => (await s.request('GET', '/v1/conversations?status=pending&limit=100', { token: seed.apiKey })).body.data.length;
    const startIds = await conversationsOf();
    const startPending = await pendingCount();
    const held = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        to: ['Fay <fay@cust.example>'],
        subject: 'An offer',
        body: 'Here it is.',
        attachment_ids: [up.body.id],
        send_at: later(10_000),
      },
    });
    assert.equal(held.status, 201, JSON.stringify(held.body));
    const id = held.body.conversation.id;
    assert.equal(held.body.message.status, 'scheduled');
    assert.deepEqual(
      held.body.message.attachments.map((a: { id: string }) => a.id),
      [up.body.id],
    );
    // While held the team sees it (it can be cancelled there), but nothing outside has heard of it.
    assert.equal(await pendingCount(), startPending + 1);
    await s.app.jobs.drain();
    assert.deepEqual(hooksOfConversation(id), [], 'no conversation.created while held');
    const seq = Number(
      (
        await s.app.db
          .selectFrom('events')
          .select((e) => e.fn.max('seq').as('m'))
          .executeTakeFirstOrThrow()
      ).m,
    );

    const undo = await s.request('DELETE', `/v1/conversations/${id}/messages/${held.body.message.id}/schedule`, { token: seed.apiKey });
    assert.equal(undo.status, 200, JSON.stringify(undo.body));
    assert.equal(undo.body.conversation_removed, true);
    assert.equal(undo.body.body, 'Here it is.');
    assert.deepEqual(undo.body.attachment_ids, [up.body.id]);
    assert.deepEqual(await conversationsOf(), startIds, 'no leftover conversation');
    assert.equal(await pendingCount(), startPending);
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).status, 404);
    // Panels are told (realtime only); webhooks never heard of the conversation, so they hear nothing now.
    const events = await s.app.db.selectFrom('events').selectAll().where('seq', '>', seq).execute();
    assert.deepEqual(
      events.map((e) => [e.type, JSON.parse(e.data).conversation_id]),
      [['conversation.removed', id]],
    );
    // The file is an upload of the inbox again, and goes with the conversation written again.
    assert.equal((await s.request('GET', `/v1/attachments/${up.body.id}`, { token: seed.apiKey })).body.filename, 'offer.txt');
    clock.advance(60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'the smtp sink stays empty');
    assert.deepEqual(hooksOfConversation(id), []);

    const again = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        to: ['Fay <fay@cust.example>'],
        subject: 'An offer',
        body: 'Here it is, really.',
        attachment_ids: undo.body.attachment_ids,
        send_at: later(10_000),
      },
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    const second = again.body.conversation.id;
    clock.advance(10_000);
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(before + 1))[before];
    assert.deepEqual(mail.to, ['fay@cust.example']);
    assert.deepEqual(
      mail.parsed.attachments.map((a) => [a.filename, a.content.toString()]),
      [['offer.txt', 'The offer']],
    );
    // The handover's events are written once the mail is out; their deliveries may take another round of jobs.
    const hooks = await waitUntil(
      async () => {
        await s.app.jobs.drain();
        const delivered = hooksOfConversation(second);
        return delivered.length >= 2 && delivered;
      },
      30_000,
      'the handover webhooks',
    );
    assert.deepEqual(hooks.map((p) => p.type).sort(), ['conversation.created', 'message.created'], 'announced once, when handed over');
    assert.ok(
      hooks.every((p) => p.timestamp === again.body.conversation.created_at),
      'both dated when it was written',
    );
    const order = await s.app.db
      .selectFrom('events')
      .select('type')
      .where('seq', '>', seq)
      .where('type', 'in', ['conversation.created', 'message.created'])
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      order.map((e) => e.type),
      ['conversation.created', 'message.created'],
      'the conversation first',
    );
    assert.deepEqual(await sendScheduledMessage(s.app, again.body.message.id), { done: 'not_scheduled' });
    await s.app.jobs.drain();
    assert.equal(hooksOfConversation(second).length, 2, 'exactly once');
    assert.equal(sink.messages.length, before + 1);
  });

  test('undo of a held forward sends nothing; a held new conversation with a teammate’s note is kept when its message is cancelled', async () => {
    const mail = await deliverMail(s, address, { From: 'Gil <gil@cust.example>', Subject: 'Pass it on' });
    const before = sink.messages.length;
    const fwd = await s.request('POST', `/v1/conversations/${mail.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: mail.message_id, to: ['ops@partner.example'], body: 'FYI', send_at: later(10_000) },
    });
    assert.equal(fwd.status, 201, JSON.stringify(fwd.body));
    const undoFwd = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/${fwd.body.id}/schedule`, { token: seed.apiKey });
    assert.equal(undoFwd.status, 200, JSON.stringify(undoFwd.body));
    assert.equal(undoFwd.body.conversation_removed, false);
    assert.deepEqual(
      undoFwd.body.to.map((t: { address: string }) => t.address),
      ['ops@partner.example'],
    );

    const start = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: ['hal@cust.example'], subject: 'Check-in', body: 'How are you?', send_at: later(10_000) },
    });
    const id = start.body.conversation.id;
    const note = await s.request('POST', `/v1/conversations/${id}/messages`, { token: seed.apiKey, body: { kind: 'note', body: 'Hal asked for a call' } });
    assert.equal(note.status, 201, JSON.stringify(note.body));
    const undo = await s.request('DELETE', `/v1/conversations/${id}/messages/${start.body.message.id}/schedule`, { token: seed.apiKey });
    assert.equal(undo.body.conversation_removed, false);
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).status, 200);

    clock.advance(60_000);
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing mailed');
    assert.deepEqual(hooked(fwd.body.id), [], 'no message.created for the forward');
    assert.deepEqual(hooked(start.body.message.id), []);
  });

  test('a bad send_at is 400 naming the field and stores nothing', async () => {
    const mail = await deliverMail(s, address, { From: 'Eve <eve@cust.example>', Subject: 'Bad times' });
    const count = async () => (await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', mail.conversation_id).execute()).length;
    const n = await count();
    for (const send_at of ['tomorrow', '2030-01-01', later(-1000), clock.now().toISOString(), later(400 * 24 * 60 * 60_000), '2030-13-45T99:00:00Z']) {
      const r = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'x', send_at } });
      assert.equal(r.status, 400, `${send_at}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, /^send_at: /);
    }
    const note = await s.request('POST', `/v1/conversations/${mail.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { kind: 'note', body: 'x', send_at: later(1000) },
    });
    assert.equal(note.status, 400);
    const fwd = await s.request('POST', `/v1/conversations/${mail.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: mail.message_id, to: ['x@partner.example'], send_at: 'soon' },
    });
    assert.equal(fwd.status, 400);
    assert.equal(await count(), n);
    // Another workspace's member cannot cancel (404 before anything else).
    const other = await s.request('DELETE', `/v1/conversations/${mail.conversation_id}/messages/m_nope/schedule`, { token: seed.apiKey });
    assert.equal(other.status, 404);
  });

  test('undo_send_seconds: a per-person setting, default 10, 0 = off, at most 60', async () => {
    // A person as sign-up makes them (the test fixtures turn the hold off).
    const person = await findOrCreatePerson(s.app, { email: 'fresh@example.com' });
    const fresh = await createSession(s.app, person.id);
    const me = await s.request('GET', '/v1/me', { token: fresh.token });
    assert.equal(me.body.person.undo_send_seconds, 10);
    const off = await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { undo_send_seconds: 0 } });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(off.body.person.undo_send_seconds, 0);
    for (const bad of [61, -1, 2.5]) {
      const r = await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { undo_send_seconds: bad } });
      assert.equal(r.status, 400, String(bad));
      assert.match(r.body.error.message, /undo_send_seconds/);
    }
    const max = await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { undo_send_seconds: 60 } });
    assert.equal(max.body.person.undo_send_seconds, 60);
    assert.equal((await s.request('GET', '/v1/me', { token: seed.ownerToken })).body.person.undo_send_seconds, 60);
  });
});

describe('a held new conversation survives kill -9', () => {
  let te: TestEnv;
  let app: App | undefined;
  let sink: SmtpSink;
  const children: ChildServer[] = [];

  before(async () => {
    te = await testEnv({});
    sink = await startSmtpSink(SINK_LOGIN);
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await sink.close();
    await te.cleanup();
  });

  test('killed during the hold: after the restart it is sent once and announced once', async () => {
    assert.equal((await runSvc(['migrate', 'up'], { env: te.env })).code, 0);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(app);
    await seedEmailChannel(app, seed, { smtpPort: sink.port });
    const first = await spawnServer(te.env);
    children.push(first);
    const sendAt = new Date(Date.now() + 3000);
    const res = await fetch(`${first.url}/v1/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inbox_id: seed.inboxId, to: ['kit@cust.example'], subject: 'Held', body: 'Before the crash.', send_at: sendAt.toISOString() }),
    });
    const started = (await res.json()) as { conversation: { id: string }; message: { id: string; status: string } };
    assert.equal(res.status, 201, JSON.stringify(started));
    assert.equal(started.message.status, 'scheduled');
    await first.kill('SIGKILL');
    const db = app.db;
    const job = await db.selectFrom('jobs').select('id').where('kind', '=', 'message.send_later').execute();
    assert.equal(job.length, 1, 'the hold is a stored job');

    // Restarted (once its time has come): sent once, conversation.created and message.created once each.
    while (Date.now() <= sendAt.getTime()) await sleep(100);
    const second = await spawnServer(te.env);
    children.push(second);
    await sink.waitFor(1);
    for (let i = 0; ; i++) {
      const m = await db.selectFrom('messages').select('delivery_status').where('id', '=', started.message.id).executeTakeFirstOrThrow();
      if (m.delivery_status === 'sent') break;
      assert.ok(i < 600, `still ${m.delivery_status}`);
      await sleep(100);
    }
    await second.kill('SIGTERM');
    assert.equal(sink.messages.length, 1, 'exactly once');
    assert.deepEqual(sink.messages[0].to, ['kit@cust.example']);
    const events = await db.selectFrom('events').select(['type', 'data']).where('workspace_id', '=', seed.workspaceId).orderBy('seq').execute();
    assert.deepEqual(
      events.filter((e) => e.data.includes(started.conversation.id) && ['conversation.created', 'message.created'].includes(e.type)).map((e) => e.type),
      ['conversation.created', 'message.created'],
    );
  });
});
