// Undo send and send later (issue 34), for what is held before it exists outside: a new
// conversation written with `send_at` is announced only when handed over and removed whole when
// undone; a held forward sends nothing when undone; a hold survives kill -9 of the server. The
// scene is send-later-scene.ts (replies and the settings: send-later.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { sendScheduledMessage } from '../../src/conversations/send-later.js';
import { createLogger } from '../../src/platform/log.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { deliverMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { sceneOf } from '../helpers/scene.js';
import { type ChildServer, runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { verifyDelivery } from '../helpers/webhooks.js';
import { startSendLaterScene, stopSendLaterScene } from './send-later-scene.js';

describe('held new conversations and forwards', () => {
  const scene = sceneOf(startSendLaterScene, stopSendLaterScene);

  /** The verified deliveries that speak of this conversation (created, or a message in it). */
  const hooksOfConversation = (conversationId: string) => {
    const { rx, hook, clock } = scene();
    return rx.received
      .filter((r) => r.path === hook.path && r.body.includes(conversationId))
      .map((r) => verifyDelivery(r, hook.secret, clock))
      .filter((p) => p.data.conversation?.id === conversationId);
  };

  test('a held new conversation: announced only when handed over; undo removes it whole, its files back in the inbox', async () => {
    const { s, clock, sink, seed, later } = scene();
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
    const { s, clock, sink, seed, address, hooked, later } = scene();
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
