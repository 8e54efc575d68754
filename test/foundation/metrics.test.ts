// The svc_* metrics an operator alerts on, each driven by the real thing and read back from the
// metrics listener: mail received over SMTP and refused, replies sent to a sink and given up,
// webhook deliveries and the outbox backlog, jobs due per kind, open realtime and widget sockets,
// migrations by state and messages copied, broadcast recipients and pauses; then promtool checks it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { EMAIL_SEND_JOB, SEND_MAX_ATTEMPTS, SEND_RETRY_DELAYS_MS } from '../../src/mail/outbound.js';
import { MIGRATION_STATES } from '../../src/mailbox-migration/states.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { enqueue } from '../../src/platform/jobs.js';
import { expandOutbox } from '../../src/webhooks/deliveries.js';
import { addresses, createBroadcast, getBroadcast, schedule } from '../helpers/broadcasts.js';
import { emitMessage } from '../helpers/events.js';
import { mbox, uploadExport, zipBuffer } from '../helpers/export-files.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { INGRESS_SECRET, ingressPort, SINK_LOGIN, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import { buildMail } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import { startTestServer, type TestServer, tempDir } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

type Labels = Record<string, string>;

/** Every sample of a Prometheus text answer: name, labels and value. */
function samples(text: string): { name: string; labels: Labels; value: number }[] {
  const out: { name: string; labels: Labels; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Labels = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

describe('metrics an operator alerts on', () => {
  let s: TestServer;
  let clock: ManualClock;
  let sink: SmtpSink;
  let rx: Receiver;
  let failing: Receiver;
  let seed: Seed;
  let address: string;

  /** The value of one series (undefined when absent). */
  const metric = async (name: string, labels: Labels = {}) => {
    const text = await (await fetch(s.metricsUrl)).text();
    const hit = samples(text).find(
      (x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v) && Object.keys(x.labels).length === Object.keys(labels).length,
    );
    return hit?.value;
  };
  const counter = async (name: string, labels: Labels = {}) => (await metric(name, labels)) ?? 0;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    rx = await startReceiver();
    failing = await startReceiver(() => ({ status: 503, body: 'down' }));
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_BROADCAST_DAILY_RECIPIENTS: '300' } });
    clock = s.clock as ManualClock;
    // Background work runs when a test drains it.
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  });
  after(async () => {
    await s.stop();
    await sink.close();
    await rx.close();
    await failing.close();
  });

  test('SMTP ingress: sessions, mail received, refusals by reason', async () => {
    const sessions = await counter('svc_smtp_sessions_total');
    const received = await counter('svc_mail_received_total', { via: 'smtp', result: 'stored' });
    const unknown = await counter('svc_smtp_refusals_total', { reason: 'unknown_recipient' });
    await sendToIngress(ingressPort(s), { to: address, subject: 'Hello', text: 'Hi there' });
    await assert.rejects(sendToIngress(ingressPort(s), { to: 'nobody@nowhere.example', subject: 'Lost', text: 'x' }), /550/);
    assert.equal(await counter('svc_smtp_sessions_total'), sessions + 2);
    assert.equal(await counter('svc_mail_received_total', { via: 'smtp', result: 'stored' }), received + 1);
    assert.equal(await counter('svc_smtp_refusals_total', { reason: 'unknown_recipient' }), unknown + 1);
  });

  test('replies: sent to the sink; a refused one retried on its schedule, then failed', async () => {
    const conversation = (await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).executeTakeFirstOrThrow()).id;
    const reply = (body: string) => s.request('POST', `/v1/conversations/${conversation}/messages`, { token: seed.apiKey, body: { body } });
    assert.equal((await reply('first')).status, 201);
    await s.app.jobs.drain();
    await sink.waitFor(1);
    assert.equal(await counter('svc_mail_sent_total', { outcome: 'sent' }), 1);

    sink.failWith(550);
    try {
      assert.equal((await reply('second')).status, 201);
      await s.app.jobs.drain();
      assert.equal(await counter('svc_mail_sent_total', { outcome: 'retried' }), 1);
      assert.equal(await counter('svc_mail_sent_total', { outcome: 'failed' }), 0);
      for (const delay of SEND_RETRY_DELAYS_MS) {
        clock.advance(delay);
        await s.app.jobs.drain();
      }
      assert.equal(await counter('svc_mail_sent_total', { outcome: 'retried' }), SEND_MAX_ATTEMPTS - 1);
      assert.equal(await counter('svc_mail_sent_total', { outcome: 'failed' }), 1);
      assert.equal(await counter('svc_mail_sent_total', { outcome: 'sent' }), 1);
    } finally {
      sink.failWith(null);
    }
  });

  test('webhook deliveries by outcome', async () => {
    const ws = await seedWorkspace(s.app);
    for (const url of [`${rx.url}/ok`, `${failing.url}/down`]) {
      assert.equal((await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url, events: ['message.created'] } })).status, 201);
    }
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await s.app.jobs.drain();
    assert.equal(await counter('svc_webhook_deliveries_total', { outcome: 'succeeded' }), 1);
    assert.equal(await counter('svc_webhook_deliveries_total', { outcome: 'retried' }), 1);
    assert.equal(await counter('svc_webhook_deliveries_total', { outcome: 'failed' }), 0);
  });

  test('jobs due and the oldest due age per kind, from the jobs table', async () => {
    await s.app.jobs.drain();
    assert.equal(await metric('svc_jobs_due', { kind: EMAIL_SEND_JOB }), 0, 'every registered kind is shown');
    await enqueue(s.app.db, s.app.clock, { kind: EMAIL_SEND_JOB, payload: { messageId: 'm_gone' } });
    clock.advance(2 * MINUTE);
    assert.equal(await metric('svc_jobs_due', { kind: EMAIL_SEND_JOB }), 1);
    assert.equal(await metric('svc_jobs_oldest_due_age_seconds', { kind: EMAIL_SEND_JOB }), 120);
    await s.app.jobs.drain();
    assert.equal(await metric('svc_jobs_due', { kind: EMAIL_SEND_JOB }), 0);
    assert.equal(await metric('svc_jobs_oldest_due_age_seconds', { kind: EMAIL_SEND_JOB }), 0);
  });

  test('open realtime and widget sockets', async () => {
    const origin = 'https://shop.example';
    const publicKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [origin] })).public_key!;
    const visitor = await s.request('POST', '/v1/widget/sessions', { body: { public_key: publicKey, email: 'visitor@example.com' }, headers: { origin } });
    assert.equal(visitor.status, 201, JSON.stringify(visitor.body));
    const open = (url: string, headers: Record<string, string>) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url, { headers });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const base = s.url.replace('http', 'ws');
    const team = await open(`${base}/v1/realtime`, { authorization: `Bearer ${seed.apiKey}` });
    const widget = await open(`${base}/v1/widget/realtime?token=${visitor.body.token}`, { origin });
    const connections = (kind: string) => metric('svc_realtime_connections', { kind });
    await waitUntil(async () => (await connections('team')) === 1 && (await connections('widget')) === 1, 5000, 'both sockets counted');
    team.close();
    await waitUntil(async () => (await connections('team')) === 0, 5000, 'the team socket closed');
    assert.equal(await connections('widget'), 1);
    widget.close();
    await waitUntil(async () => (await connections('widget')) === 0, 5000, 'the widget socket closed');
  });

  test('migrations by state and the messages the copy stored', async () => {
    for (const state of MIGRATION_STATES) assert.equal(await metric('svc_migrations', { state }), 0, state);
    const created = await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider: 'export_file', inbox_id: seed.inboxId } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.equal(await metric('svc_migrations', { state: 'draft' }), 1);
    const mail = (n: number) =>
      buildMail({
        from: `Customer ${n} <c${n}@customer.test>`,
        to: address,
        subject: `Question ${n}`,
        messageId: `q${n}-${crypto.randomBytes(4).toString('hex')}@customer.test`,
        date: new Date(clock.now().getTime() - n * 86_400_000),
        text: `Body ${n}`,
      });
    const file = await zipBuffer([{ name: 'Inbox.mbox', data: mbox([await mail(1), await mail(2), await mail(3)]) }]);
    assert.equal((await uploadExport(s.url, seed.apiKey, id, file, { settle: () => s.app.jobs.drain() })).upload.state, 'read');
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    assert.equal(await metric('svc_migrations', { state: 'ready' }), 1);
    assert.equal(await metric('svc_migrations', { state: 'draft' }), 0);
    assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    assert.equal(await metric('svc_migrations', { state: 'syncing' }), 1);
    assert.equal(await counter('svc_migration_messages_copied_total'), 3);
  });

  test('broadcast recipients sent, broadcasts paused by reason', async () => {
    const sent = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(3));
    assert.equal((await schedule(s, seed.apiKey, sent.id)).status, 200);
    await s.app.jobs.drain();
    assert.equal((await getBroadcast(s, seed.apiKey, sent.id)).status, 'sent');
    assert.equal(await counter('svc_broadcast_recipients_total', { outcome: 'sent' }), 3);
    const later = await createBroadcast(s, seed.apiKey, seed.inboxId, addresses(2, 'later'));
    assert.equal((await schedule(s, seed.apiKey, later.id, { send_at: new Date(clock.now().getTime() + 60 * MINUTE).toISOString() })).status, 200);
    assert.equal((await s.request('POST', `/v1/broadcasts/${later.id}/pause`, { token: seed.apiKey })).status, 200);
    assert.equal(await counter('svc_broadcasts_paused_total', { reason: 'manual' }), 1);
  });

  test('the outbox backlog: due and waiting deliveries, and how long the oldest due one waits', async () => {
    // The dispatcher stops here, so that nothing is sent while the backlog is read.
    await s.server.parts.webhooks.stop();
    const pending = (state: string) => metric('svc_webhook_outbox_pending', { state });
    // The failing endpoint's delivery (an earlier test) waits for its retry: it is the one waiting.
    assert.equal(await pending('waiting'), 1);
    assert.equal(await pending('due'), 0);
    await s.app.db.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null }).where('status', '=', 'pending').execute();
    assert.equal(await pending('waiting'), 0);
    assert.equal(await metric('svc_webhook_outbox_oldest_due_age_seconds'), 0);
    const ws = await seedWorkspace(s.app);
    assert.equal((await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/backlog`, events: ['message.created'] } })).status, 201);
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);
    assert.equal(await pending('due'), 2);
    clock.advance(90_000);
    assert.equal(await metric('svc_webhook_outbox_oldest_due_age_seconds'), 90);
    // One of them waits for a retry an hour from now (its delivery row made as the dispatcher would).
    await expandOutbox(s.app, { room: 0, load: new Map(), perEndpoint: 32, maxEvents: 256 });
    assert.equal(await pending('due'), 2);
    assert.equal(await metric('svc_webhook_outbox_oldest_due_age_seconds'), 90, 'due since recorded');
    const one = await s.app.db
      .selectFrom('webhook_deliveries')
      .select(['event_seq', 'endpoint_id'])
      .where('workspace_id', '=', ws.workspaceId)
      .orderBy('event_seq')
      .executeTakeFirstOrThrow();
    await s.app.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: new Date(clock.now().getTime() + 60 * MINUTE).toISOString() })
      .where('event_seq', '=', one.event_seq)
      .where('endpoint_id', '=', one.endpoint_id)
      .execute();
    assert.equal(await pending('due'), 1);
    assert.equal(await pending('waiting'), 1);
  });

  test('the whole answer passes promtool', async () => {
    const text = await (await fetch(s.metricsUrl)).text();
    for (const name of [
      'svc_mail_sent_total',
      'svc_webhook_deliveries_total',
      'svc_webhook_outbox_pending',
      'svc_jobs_due',
      'svc_realtime_connections',
      'svc_smtp_sessions_total',
      'svc_smtp_refusals_total',
      'svc_migrations',
      'svc_migration_messages_copied_total',
      'svc_broadcast_recipients_total',
      'svc_broadcasts_paused_total',
    ]) {
      assert.match(text, new RegExp(`^# HELP ${name} `, 'm'));
    }
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
    if (!promtool) {
      if (process.env.CI) assert.fail('promtool is missing in CI');
      return;
    }
    const file = path.join(tempDir(), 'metrics.txt');
    fs.writeFileSync(file, text);
    execFileSync('sh', ['-c', `${promtool} check metrics < ${file}`], { stdio: 'pipe' });
  });
});
