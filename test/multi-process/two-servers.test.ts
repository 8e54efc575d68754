// Two `svc serve` processes on one Postgres database (and one shared data directory for files), as
// behind a load balancer: background work (webhook deliveries, broadcast sends, workspace deletion)
// runs once across them, realtime reaches sockets held by the other process, and rate limits count
// the hits of both. A mailbox migration and retention with two servers: mailbox-migration.test.ts,
// retention.test.ts.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import type { App } from '../../src/context.js';
import { createSession } from '../../src/people/service.js';
import { addresses } from '../helpers/broadcasts.js';
import { emitMessage } from '../helpers/events.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedConversations, storedKeys, waitUntil } from '../helpers/lifecycle.js';
import { SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { json, quietApp, skipWithoutPostgres as skip, stopAll } from '../helpers/multi-process.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

const ORIGIN = 'https://shop.example';

/** A counter's value on a server's /metrics (summed over the label sets matching `labels`). */
async function metric(server: ChildServer, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(server.metricsUrl!)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const [key, value] = line.split(' ');
    if ((key === name || key.startsWith(`${name}{`)) && key.includes(labels)) sum += Number(value);
  }
  return sum;
}

interface Socket {
  ws: WebSocket;
  frames: any[];
  closed: Promise<number>;
}

async function openSocket(url: string, headers: Record<string, string>): Promise<Socket> {
  const ws = new WebSocket(url, { headers });
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  await waitUntil(() => frames.some((f) => f.type === 'hello' || f.type === 'live'), 20_000, 'the hello frame');
  return { ws, frames, closed };
}

describe('two servers on one Postgres database', { skip }, () => {
  let te: TestEnv;
  let app: App;
  let seed: Seed;
  let rx: Receiver;
  let sink: SmtpSink;
  let a: ChildServer;
  let b: ChildServer;
  const servers: ChildServer[] = [];
  const sockets: WebSocket[] = [];

  before(async () => {
    te = await testEnv({ SVC_WEBHOOK_ALLOW_PRIVATE: '1' });
    rx = await startReceiver(() => 'hold');
    sink = await startSmtpSink(SINK_LOGIN);
    a = await spawnServer(te.env);
    servers.push(a);
    // The test writes into the same database as a third process would (a command, `svc ingest-email`).
    app = quietApp(te.env);
    seed = await seedWorkspace(app);
  });
  after(async () => {
    for (const ws of sockets) ws.terminate();
    await stopAll(servers, app, te);
    await rx?.close();
    await sink?.close();
  });

  test('webhook deliveries: a server that starts while the other holds leases takes none of them; each delivery is sent once', async (t) => {
    // The receiver holds A's first requests while B starts, each for 8 s at most: held past the 10 s
    // answer deadline, A would rightly count a timeout and send it again (a loaded machine can take
    // that long to start B).
    const held = new Set<http.ServerResponse>();
    const answer = (res: http.ServerResponse) => {
      if (held.delete(res) && !res.destroyed) res.writeHead(200).end('ok');
    };
    rx.handler = () => (res) => {
      held.add(res);
      setTimeout(() => answer(res), 8_000).unref();
    };
    const created = await json(`${a.url}/v1/webhooks`, { method: 'POST', token: seed.apiKey, body: { url: `${rx.url}/hook`, events: ['message.created'] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const secret = created.body.secret as string;

    // Server A sends the first deliveries and the receiver holds them: A's leases are under way.
    const first = [];
    for (let i = 0; i < 10; i++) first.push(await emitMessage(app, seed.workspaceId, seed.inboxId));
    await rx.waitFor(10);

    // Server B starts meanwhile: A is alive, so B leaves A's leases alone (a lone server would take them back).
    b = await spawnServer(te.env);
    servers.push(b);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(rx.received.length, 10, 'nothing held by A was sent again by B');
    if (held.size < 10) t.diagnostic(`only ${held.size} of A's 10 requests were still held once B had started (a slow start)`);

    rx.handler = async () => {
      await new Promise((r) => setTimeout(r, 5));
      return { status: 200, body: 'ok' };
    };
    for (const res of [...held]) answer(res);
    // One event at a time: both servers are woken by each commit and race for its delivery.
    const rest = [];
    for (let i = 0; i < 90; i++) {
      rest.push(await emitMessage(app, seed.workspaceId, seed.inboxId));
      await new Promise((r) => setTimeout(r, 10));
    }
    const all = [...first, ...rest];
    await waitUntil(
      async () => {
        const row = await app.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '=', 'succeeded')
          .executeTakeFirstOrThrow();
        return Number(row.n) === all.length;
      },
      60_000,
      'every delivery to succeed',
    );

    const counts = new Map<string, number>();
    for (const r of rx.received) counts.set(String(r.headers['webhook-id']), (counts.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    assert.deepEqual(new Set(counts.keys()), new Set(all.map((e) => `msg_${e.id.slice(4)}`)));
    for (const [id, n] of counts) {
      if (n === 1) continue;
      const tried = await app.db
        .selectFrom('webhook_attempts')
        .select(['started_at', 'duration_ms', 'outcome', 'status_code', 'error'])
        .where('event_id', '=', `evt_${id.slice(4)}`)
        .execute();
      assert.fail(`${id} was sent ${n} times; its attempts: ${JSON.stringify(tried)}`);
    }
    for (const r of rx.received.slice(0, 20)) verifyDelivery(r, secret, { now: () => new Date() });
    const attempts = await app.db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(attempts.n), all.length, 'one attempt row per delivery');
    const byA = await metric(a, 'svc_webhook_attempts_total');
    const byB = await metric(b, 'svc_webhook_attempts_total');
    assert.equal(byA + byB, all.length);
    assert.ok(byA > 0 && byB > 0, `both servers sent (A ${byA}, B ${byB})`);
  });

  test('rate limits count the hits that reach either server', async () => {
    const channel = await createChatChannel(app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Limits',
      origins: [ORIGIN],
      allowAnonymous: true,
    });
    await app.db.deleteFrom('rate_limits').execute();
    const answers: number[] = [];
    // Visitor sessions: 20 per address per 10 minutes, whichever server the balancer picks.
    for (let i = 0; i < 22; i++) {
      const server = i % 2 === 0 ? a : b;
      const r = await json(`${server.url}/v1/widget/sessions`, { method: 'POST', body: { public_key: channel.public_key }, origin: ORIGIN });
      answers.push(r.status);
      if (r.status === 429) {
        assert.equal(r.body.error.code, 'rate_limited');
        assert.ok(Number(r.headers.get('retry-after')) > 0);
      }
    }
    assert.deepEqual(answers, [...Array(20).fill(201), 429, 429]);

    // Visitor messages: 30 per session per minute, across both servers.
    const session = await json(`${a.url}/v1/widget/sessions`, { method: 'POST', body: { public_key: channel.public_key }, origin: ORIGIN });
    assert.equal(session.status, 429, 'the address is still limited');
    await app.db.deleteFrom('rate_limits').execute();
    const v = await json(`${b.url}/v1/widget/sessions`, { method: 'POST', body: { public_key: channel.public_key }, origin: ORIGIN });
    assert.equal(v.status, 201);
    const started = await json(`${a.url}/v1/widget/conversations`, { method: 'POST', token: v.body.token, body: { body: 'hello' }, origin: ORIGIN });
    assert.equal(started.status, 201);
    const conversationId = started.body.conversation.id;
    const sent: number[] = [];
    for (let i = 0; i < 30; i++) {
      const server = i % 2 === 0 ? b : a;
      const r = await json(`${server.url}/v1/widget/conversations/${conversationId}/messages`, {
        method: 'POST',
        token: v.body.token,
        body: { body: `m${i}` },
        origin: ORIGIN,
      });
      sent.push(r.status);
    }
    assert.deepEqual(sent, [...Array(29).fill(201), 429], 'the conversation start and 29 messages use up the 30');
    await app.db.deleteFrom('rate_limits').execute();
  });

  test('realtime: events recorded on one server reach team and widget sockets on the other, gap-free', async () => {
    const channel = await createChatChannel(app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Widget',
      origins: [ORIGIN],
      allowAnonymous: true,
    });
    const v = await json(`${a.url}/v1/widget/sessions`, { method: 'POST', body: { public_key: channel.public_key }, origin: ORIGIN });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    const started = await json(`${a.url}/v1/widget/conversations`, {
      method: 'POST',
      token: v.body.token,
      body: { body: 'Where is my order?' },
      origin: ORIGIN,
    });
    const conversationId = started.body.conversation.id as string;

    const onB = await openSocket(`${b.url.replace('http', 'ws')}/v1/realtime`, { authorization: `Bearer ${seed.apiKey}` });
    const onA = await openSocket(`${a.url.replace('http', 'ws')}/v1/realtime`, { authorization: `Bearer ${seed.apiKey}` });
    const widgetOnB = await openSocket(`${b.url.replace('http', 'ws')}/v1/widget/realtime?token=${v.body.token}`, { origin: ORIGIN });
    sockets.push(onB.ws, onA.ws, widgetOnB.ws);
    const cursor = onB.frames.find((f) => f.type === 'hello').cursor as number;

    // A reply through server A reaches the sockets held by server B. How soon is not timed here (a
    // loaded machine may take seconds): that another process's commit wakes the watch at once, with
    // its timed polls out of the way, is test/multi-process/notify.test.ts.
    const reply = await json(`${a.url}/v1/conversations/${conversationId}/messages`, {
      method: 'POST',
      token: seed.ownerToken,
      body: { body: 'It ships today.' },
    });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    await waitUntil(() => onB.frames.some((f) => f.type === 'event' && f.event.data?.message?.id === reply.body.id), 20_000, 'the team socket on B');
    await waitUntil(() => widgetOnB.frames.some((f) => f.type === 'message' && f.message.body === 'It ships today.'), 20_000, 'the widget socket on B');

    // Writes through both servers at once: both sockets see the same stream, in order, once each.
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        json(`${(i % 2 === 0 ? a : b).url}/v1/conversations/${conversationId}/messages`, {
          method: 'POST',
          token: seed.apiKey,
          body: { kind: 'note', body: `note ${i}` },
        }).then((r) => assert.equal(r.status, 201, JSON.stringify(r.body))),
      ),
    );
    const replay = async () => {
      const out: number[] = [];
      let after = cursor;
      for (;;) {
        const page = await json(`${a.url}/v1/events?after=${after}&limit=200`, { token: seed.apiKey });
        assert.equal(page.status, 200, JSON.stringify(page.body));
        const data = page.body.data as { seq: number }[];
        out.push(...data.map((e) => e.seq));
        if (!page.body.next_cursor || data.length === 0) return out;
        after = data[data.length - 1].seq;
      }
    };
    const stored = await replay();
    assert.ok(stored.length >= 31, `${stored.length} events stored`);
    const seqs = (s: Socket) => s.frames.filter((f) => f.type === 'event').map((f) => f.event.seq as number);
    await waitUntil(() => seqs(onB).length >= stored.length && seqs(onA).length >= stored.length, 20_000, 'every event on both sockets');
    // Background work may add events after the replay was read: the sockets' first ones are the replay.
    assert.deepEqual(seqs(onB).slice(0, stored.length), stored, 'the socket on B: every event once, in stream order');
    assert.deepEqual(seqs(onA).slice(0, stored.length), stored, 'the socket on A: the same');
    for (const list of [stored, seqs(onA), seqs(onB)]) for (let i = 1; i < list.length; i++) assert.ok(list[i] > list[i - 1], 'increasing, no repeats');
  });

  test('a session ended through one server closes its socket on the other at once', async () => {
    const { token } = await createSession(app, seed.ownerId);
    const onB = await openSocket(`${b.url.replace('http', 'ws')}/v1/realtime`, { authorization: `Bearer ${token}` });
    sockets.push(onB.ws);
    const out = await json(`${a.url}/v1/auth/signout`, { method: 'POST', token });
    assert.ok(out.status < 300, JSON.stringify(out.body));
    // The socket's first heartbeat check (which would find the session gone too) is 25 s after it
    // opened: closed well before that, it was the relayed signal that closed it, however loaded the machine.
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise((r) => (timer = setTimeout(() => r('still open 15 s after the sign-out on A'), 15_000)));
    assert.equal(await Promise.race([onB.closed, giveUp]), 4403);
    clearTimeout(timer);
  });

  test('broadcast sends: every recipient gets one mail with both servers running the send job', async () => {
    await seedEmailChannel(app, seed, { smtpPort: sink.port });
    const emails = addresses(60, 'multi');
    const created = await json(`${a.url}/v1/broadcasts`, {
      method: 'POST',
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, subject: 'News', text: 'Hello! Leave: {{unsubscribe_url}}', recipients: { emails } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const scheduled = await json(`${b.url}/v1/broadcasts/${created.body.id}/schedule`, { method: 'POST', token: seed.apiKey, body: {} });
    assert.equal(scheduled.status, 200, JSON.stringify(scheduled.body));
    await sink.waitFor(emails.length, 60_000);
    await waitUntil(
      async () => (await json(`${a.url}/v1/broadcasts/${created.body.id}`, { token: seed.apiKey })).body.status === 'sent',
      30_000,
      'the broadcast to end',
    );
    await new Promise((r) => setTimeout(r, 300));
    const to = sink.messages.map((m) => m.to[0]).sort();
    assert.deepEqual(to, [...emails].sort(), 'each recipient once');
    const shown = await json(`${b.url}/v1/broadcasts/${created.body.id}`, { token: seed.apiKey });
    assert.equal(shown.body.counts.sent, emails.length);
  });

  test('workspace deletion batches run once: exact totals, every row gone', async () => {
    const doomed = await seedWorkspace(app, { name: 'Doomed' });
    // Several batches (DEFAULT_BATCH rows each), files in the shared data directory.
    const conversations = 1200;
    const keys = await seedConversations(app, te.dataDir, doomed, conversations);
    const workspace = await json(`${a.url}/v1/workspace`, { token: doomed.apiKey });
    const deleted = await json(`${b.url}/v1/workspace`, { method: 'DELETE', token: doomed.ownerToken, body: { name: workspace.body.name } });
    assert.ok(deleted.status < 300, JSON.stringify(deleted.body));
    await waitUntil(
      async () => {
        const row = await app.db.selectFrom('workspace_deletions').select('finished_at').where('workspace_id', '=', doomed.workspaceId).executeTakeFirst();
        return !!row?.finished_at;
      },
      60_000,
      'the deletion to finish',
    );
    const row = await app.db.selectFrom('workspace_deletions').selectAll().where('workspace_id', '=', doomed.workspaceId).executeTakeFirstOrThrow();
    assert.equal(row.conversations_deleted, conversations, 'each conversation counted once');
    assert.equal(row.files_deleted, keys.length, 'each file counted once');
    const left = await app.db.selectFrom('conversations').select('id').where('workspace_id', '=', doomed.workspaceId).execute();
    assert.deepEqual(left, []);
    const onDisk = storedKeys(te.dataDir);
    assert.ok(
      keys.every((k) => !onDisk.has(k)),
      'every file removed',
    );
  });

  test('each server has its own presence record; a stopped one removes its own', async () => {
    const keys = async () => (await app.db.selectFrom('server_meta').select('key').where('key', 'like', 'server_running:%').execute()).map((r) => r.key).sort();
    assert.equal((await keys()).length, 2);
    assert.equal(await b.kill('SIGTERM'), 0);
    assert.equal((await keys()).length, 1);
  });
});
