// Workspace deletion: it stops at once (members, keys, chat keys, addresses, webhooks, push), then
// the job removes the data in batches with its log lines; the hourly job queues a lost deletion again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { WORKSPACE_DELETE_JOB } from '../../src/lifecycle/workspace-deletion.js';
import { HOUR, ManualClock } from '../../src/platform/clock.js';
import { generateVapidKeys } from '../../src/push/commands.js';
import { chatChannelByKey } from '../../src/widget/service.js';
import { emitMessage } from '../helpers/events.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverWithFile, referencedKeys, storedKeys } from '../helpers/lifecycle.js';
import { INGRESS_SECRET, ingressPort, rawMail, SmtpDialog, seedEmailChannel } from '../helpers/mail.js';
import { runSvc, startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

const vapid = generateVapidKeys();
const p256dh = generateVapidKeys().publicKey; // any valid uncompressed P-256 point
const subscription = (n: string) => ({ endpoint: `https://push.example.com/send/${n}`, keys: { p256dh, auth: Buffer.alloc(16, 7).toString('base64url') } });

describe('workspace deletion', () => {
  let s: TestServer;
  let clock: ManualClock;
  let rx: Receiver;

  before(async () => {
    clock = new ManualClock('2031-05-01T00:00:00Z');
    rx = await startReceiver();
    s = await startTestServer({
      clock,
      env: {
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_WEBHOOK_ALLOW_PRIVATE: '1',
        SVC_VAPID_PUBLIC_KEY: vapid.publicKey,
        SVC_VAPID_PRIVATE_KEY: vapid.privateKey,
      },
    });
    await s.app.jobs.stop();
  });
  after(async () => {
    await s.stop();
    await rx.close();
  });

  test('only an owner with the exact name may delete; refusals change nothing', async () => {
    const ws = await seedWorkspace(s.app, { name: 'Refusals Inc' });
    const admin = await addPerson(s.app, ws.workspaceId, 'admin');
    const del = (token: string, body: unknown) => s.request('DELETE', '/v1/workspace', { token, body });
    assert.equal((await del(admin.token, { name: 'Refusals Inc' })).status, 403);
    assert.equal((await del(ws.apiKey, { name: 'Refusals Inc' })).status, 403);
    const wrong = await del(ws.ownerToken, { name: 'refusals inc' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, 'invalid_request');
    for (const body of [{}, { name: '' }, { name: 'Refusals Inc', extra: 1 }, { name: 5 }]) assert.equal((await del(ws.ownerToken, body)).status, 400);
    assert.equal((await s.request('GET', '/v1/workspace', { token: ws.apiKey })).status, 200, 'still working');
  });

  test('everything stops at once, the job removes the data in batches, people keep their accounts', async () => {
    const ws: Seed = await seedWorkspace(s.app, { name: 'Doomed' });
    const other = await seedWorkspace(s.app, { name: 'Survivor' });
    const channel = await seedEmailChannel(s.app, ws);
    const chat = await createChatChannel(s.app, { workspaceId: ws.workspaceId, inboxId: ws.inboxId, name: 'Site', origins: ['https://shop.example.com'] });
    const agentOnlyHere = await addPerson(s.app, ws.workspaceId, 'agent');
    const agentAlsoElsewhere = await addPerson(s.app, ws.workspaceId, 'agent');
    await s.app.db
      .insertInto('memberships')
      .values({
        id: 'mem_elsewhere',
        workspace_id: other.workspaceId,
        person_id: agentAlsoElsewhere.personId,
        role: 'agent',
        created_at: clock.now().toISOString(),
      })
      .execute();
    for (const [who, n] of [
      [agentOnlyHere, 'a'],
      [agentAlsoElsewhere, 'b'],
    ] as const) {
      assert.equal((await s.request('POST', '/v1/me/push-subscriptions', { token: who.token, body: subscription(n) })).status, 201);
    }
    const hook = await s.request('POST', '/v1/webhooks', { token: ws.apiKey, body: { url: `${rx.url}/doomed` } });
    const widget = () => s.request('GET', `/v1/widget/config?public_key=${chat.public_key}`, { headers: { origin: 'https://shop.example.com' } });
    assert.equal((await widget()).status, 200);
    const conversations: string[] = [];
    for (let i = 0; i < 130; i++) conversations.push((await deliverWithFile(s, channel.address!)).conversation_id);
    await s.app.jobs.drain();
    // A file uploaded for a conversation not started yet (an upload of the inbox) goes too.
    const upload = await s.request('POST', `/v1/inboxes/${ws.inboxId}/attachments?filename=draft.txt`, {
      token: ws.apiKey,
      raw: Buffer.from('draft'),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const files = await referencedKeys(s.app.db, ws.workspaceId);
    assert.equal(files.length, 260);
    files.push((await s.app.db.selectFrom('inbox_uploads').select('storage_key').where('id', '=', upload.body.id).executeTakeFirstOrThrow()).storage_key);
    const sentBefore = rx.received.length;
    assert.ok(sentBefore > 0);

    // A realtime socket of the workspace is open.
    const sock = new WebSocket(`${s.url.replace('http', 'ws')}/v1/realtime`, { headers: { authorization: `Bearer ${ws.apiKey}` } });
    const closed = new Promise<number>((resolve) => sock.on('close', (code) => resolve(code)));
    await new Promise((r) => sock.once('message', r));

    const r = await s.request('DELETE', '/v1/workspace', { token: ws.ownerToken, body: { name: 'Doomed' } });
    assert.equal(r.status, 202);
    assert.equal(r.body.workspace_id, ws.workspaceId);
    assert.equal(await closed, 4403, 'the realtime socket is closed');

    // At once: keys, members, chat keys and addresses are refused; webhooks are off; push is gone.
    assert.equal((await s.request('GET', '/v1/workspace', { token: ws.apiKey })).status, 401);
    assert.equal((await s.request('GET', '/v1/conversations', { token: ws.ownerToken })).status, 403);
    assert.equal((await s.request('GET', '/v1/me', { token: ws.ownerToken })).status, 200, 'the account stays');
    assert.equal((await widget()).status, 404, 'the chat key is refused');
    await assert.rejects(chatChannelByKey(s.app, chat.public_key!), /not found/);
    const port = ingressPort(s);
    const { dialog } = await SmtpDialog.open(port);
    await dialog.send('EHLO client.example');
    assert.match(await dialog.send('MAIL FROM:<customer@example.com>'), /^250/);
    assert.match(await dialog.send(`RCPT TO:<${channel.address}>`), /^550/);
    dialog.close();
    const http = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(channel.address!)}`, {
      raw: rawMail({ To: channel.address! }),
      token: INGRESS_SECRET,
    });
    assert.equal(http.status, 404);
    const endpoint = await s.app.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', hook.body.id).executeTakeFirstOrThrow();
    assert.ok(endpoint.disabled_at);
    const subs = await s.app.db.selectFrom('push_subscriptions').select('person_id').execute();
    assert.ok(!subs.some((p) => p.person_id === agentOnlyHere.personId), 'a member left without a workspace loses push');
    assert.ok(
      subs.some((p) => p.person_id === agentAlsoElsewhere.personId),
      'a member of another workspace keeps it',
    );
    // An event that still gets recorded is not delivered.
    await emitMessage(s.app, ws.workspaceId, ws.inboxId);

    await s.app.jobs.drain();
    assert.equal(rx.received.length, sentBefore, 'nothing more was sent');
    const lines = s.logs.filter((l) => l.msg === 'workspace deletion' && l.workspace_id === ws.workspaceId);
    assert.ok(lines.length >= 1);
    for (const line of lines) assert.equal((line.conversations_deleted as number) + (line.conversations_left as number), 130, 'counts add up');
    const last = lines.at(-1)!;
    assert.deepEqual([last.conversations_deleted, last.conversations_left, last.files_deleted, last.done], [130, 0, 261, true]);

    for (const table of [
      'conversations',
      'messages',
      'attachments',
      'contacts',
      'inboxes',
      'channels',
      'memberships',
      'api_keys',
      'events',
      'webhook_endpoints',
      'realtime_connections',
      'inbox_uploads',
    ] as const) {
      const rows = await s.app.db.selectFrom(table).select('workspace_id').where('workspace_id', '=', ws.workspaceId).execute();
      assert.equal(rows.length, 0, `${table} rows left`);
    }
    const onDisk = storedKeys(s.env.SVC_DATA_DIR);
    for (const key of files) assert.ok(!onDisk.has(key), `${key} removed from storage`);
    for (const person of [ws.ownerId, agentOnlyHere.personId, agentAlsoElsewhere.personId]) {
      assert.ok(await s.app.db.selectFrom('people').select('id').where('id', '=', person).executeTakeFirst(), 'people keep their accounts');
    }
    const record = await s.app.db.selectFrom('workspace_deletions').selectAll().where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow();
    assert.ok(record.finished_at);
    assert.equal(record.requested_by, ws.ownerId);
    // The other workspace is untouched.
    assert.equal((await s.request('GET', '/v1/workspace', { token: other.apiKey })).status, 200);
    // Deleting again: it is gone.
    assert.equal((await s.request('DELETE', '/v1/workspace', { token: ws.ownerToken, body: { name: 'Doomed' } })).status, 403);
  });

  test('a lost deletion job is queued again by the hourly job', async () => {
    const ws = await seedWorkspace(s.app, { name: 'Lost' });
    const channel = await seedEmailChannel(s.app, ws);
    await deliverWithFile(s, channel.address!);
    assert.equal((await s.request('DELETE', '/v1/workspace', { token: ws.ownerToken, body: { name: 'Lost' } })).status, 202);
    await s.app.db.deleteFrom('jobs').where('kind', '=', WORKSPACE_DELETE_JOB).execute();
    await s.app.jobs.drain();
    assert.equal(
      (await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', ws.workspaceId).execute()).length,
      1,
      'no job, nothing happens',
    );
    clock.advance(HOUR);
    await s.app.jobs.drain();
    const line = s.logs.filter((l) => l.msg === 'retention').at(-1)!;
    assert.equal(line.workspace_deletions_queued, 1);
    assert.equal((await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', ws.workspaceId).execute()).length, 0);
    const record = await s.app.db.selectFrom('workspace_deletions').selectAll().where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow();
    assert.ok(record.finished_at);
  });

  test('svc workspace delete: without --yes only says what it would delete; with --yes deletes', async () => {
    const ws = await seedWorkspace(s.app, { name: 'By Command' });
    const dry = await runSvc(['workspace', 'delete', '--workspace', 'By Command'], { env: s.env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, /would delete workspace "By Command" .*1 member.*1 API key.*1 inbox/);
    assert.match(dry.stderr, /nothing was changed/);
    assert.equal(dry.stdout, '');
    assert.equal((await s.request('GET', '/v1/workspace', { token: ws.apiKey })).status, 200);
    const unknown = await runSvc(['workspace', 'delete', '--workspace', 'Nope', '--yes'], { env: s.env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not found/);
    const real = await runSvc(['workspace', 'delete', '--workspace', ws.workspaceId, '--yes'], { env: s.env });
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stderr, /deleted workspace "By Command"/);
    assert.equal((await s.request('GET', '/v1/workspace', { token: ws.apiKey })).status, 401);
    await s.app.jobs.drain();
    const record = await s.app.db.selectFrom('workspace_deletions').selectAll().where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow();
    assert.equal(record.requested_by, 'operator');
    assert.ok(record.finished_at);
  });
});
