// A scripted run of the move_to_service prompt with the SDK's MCP client against a real server and
// a real Dovecot: from the address to a completed migration. The assistant never handles the
// password: it hands out a credentials link, and the person enters the password through the
// link's API (a wrong one first: the link stays usable; the right one uses it up). The inbox has
// no e-mail channel, so one is made for the address and the answer says SMTP must be set in the
// panel. At the end the password appears in no tool answer, API answer, log line, event or
// activity log, and it is deleted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, ingressPort, sendToIngress } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { connectMcp, type McpSession } from './helpers.js';

const WRONG_PASSWORD = 'wrong-pass-7781';

describe('move_to_service, scripted, from the address to completed', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let te: TestEnv;
  let sink: SmtpSink;
  let seed: Seed;
  let mcp: McpSession;
  const apiAnswers: string[] = [];
  const clock = new ManualClock(new Date());
  const now = clock.now();

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { body });
    apiAnswers.push(JSON.stringify(r.body));
    return r;
  };
  const drain = () => s.app.jobs.drain();
  const step = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await mcp.call(name, args);
    assert.equal(r.isError, false, `${name}: ${r.text}`);
    return r.body;
  };

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({
          from: 'Tina <tina@customer.test>',
          to: SUPPORT,
          subject: 'Where is my order',
          messageId: 'order@customer.test',
          date: daysAgo(now, 3),
        }),
        flags: 'S',
        receivedAt: daysAgo(now, 3),
      },
      {
        raw: await buildMail({ from: 'Tom <tom@customer.test>', to: SUPPORT, subject: 'Refund', messageId: 'refund@customer.test', date: daysAgo(now, 2) }),
        flags: 'S',
        receivedAt: daysAgo(now, 2),
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'tina@customer.test',
          subject: 'Re: Where is my order',
          messageId: 'order-answer@acme.test',
          inReplyTo: 'order@customer.test',
          references: ['order@customer.test'],
          date: daysAgo(now, 2),
        }),
        flags: 'S',
      },
    ]);
    sink = await startSmtpSink();
    te = await testEnv({
      SVC_MIGRATION_ALLOW_PRIVATE: '1',
      SVC_INGRESS_SECRET: INGRESS_SECRET,
      SVC_FORWARDING_DOMAIN: 'in.svc.test',
      SVC_SMTP_HOST: '127.0.0.1',
      SVC_SMTP_PORT: String(sink.port),
      SVC_SMTP_TLS: 'none',
      SVC_SMTP_FROM: 'svc@svc.test',
    });
    s = await startTestServer({ clock, testEnv: te });
    await s.app.jobs.stop();
    s.app.resolveMx = async () => [];
    seed = await seedWorkspace(s.app);
    const key = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'assistant', scopes: ['migrations:manage'] });
    mcp = await connectMcp(s, key.secret);
  });
  after(async () => {
    await mcp?.close();
    await s?.stop();
    await te?.cleanup();
    await sink?.close();
    await d?.stop();
  });

  test('every step through the MCP tools; the password only through the link', async () => {
    const prompt = await mcp.client.getPrompt({ name: 'move_to_service', arguments: { address: SUPPORT, inbox: seed.inboxId } });
    assert.match(prompt.messages[0].content.type === 'text' ? prompt.messages[0].content.text : '', /migration_credentials_link/);

    // 1. Source.
    const inboxes = await step('list_inboxes');
    assert.deepEqual(
      inboxes.data.map((i: { id: string; channels: unknown[] }) => [i.id, i.channels.length]),
      [[seed.inboxId, 0]],
      'the inbox has no channel yet',
    );
    const found = await step('migration_detect', { address: SUPPORT });
    assert.equal(found.provider, 'imap');

    // 2. Create: only the inbox is named, so a channel for the address is made, without SMTP.
    const created = await step('migration_create', {
      provider: 'imap',
      source_address: SUPPORT,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: seed.inboxId,
    });
    const id: string = created.migration.id;
    assert.equal(created.migration.state, 'draft');
    assert.equal(created.migration.created_channel.address, SUPPORT);
    assert.equal(created.migration.channel_id, created.migration.created_channel.id);
    assert.ok(
      created.notices.some((n: string) => /SMTP server, user name and password in the panel.*before replies can be sent/.test(n)),
      JSON.stringify(created.notices),
    );
    const channels = await step('list_channels', { inbox_id: seed.inboxId });
    assert.deepEqual(
      channels.data.map((c: { address: string; smtp: unknown }) => [c.address, c.smtp]),
      [[SUPPORT, null]],
    );
    assert.match(created.next_step, /migration_credentials_link/);

    // 3. Connect: a link for the person; the assistant polls until connected.
    const link = await step('migration_credentials_link', { migration_id: id });
    assert.equal(link.single_use, true);
    assert.equal(Date.parse(link.expires_at) - clock.now().getTime(), 30 * MINUTE);
    const url = new URL(link.url);
    assert.equal(url.origin, s.url, 'without SVC_PUBLIC_URL the link names the address the assistant reached');
    assert.equal(url.pathname, `/migrations/${id}/connect`);
    const token = url.hash.replace(/^#token=/, '');
    assert.match(token, /^svc_mcl_/);
    const stored = await s.app.db.selectFrom('migration_credential_links').selectAll().where('migration_id', '=', id).execute();
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0].token_hash, token, 'only a hash of the token is stored');
    assert.ok(!JSON.stringify(stored).includes(token));
    assert.equal((await step('migration_status', { migration_id: id })).migration.credentials.set, false);

    const check = await api('POST', `/v1/migration-links/${id}/check`, { token });
    assert.equal(check.status, 200, JSON.stringify(check.body));
    assert.equal(check.body.mailbox, SUPPORT);
    const wrong = await api('PUT', `/v1/migration-links/${id}/credentials`, { token, password: WRONG_PASSWORD });
    assert.equal(wrong.status, 200, JSON.stringify(wrong.body));
    assert.equal(wrong.body.connected, false);
    assert.equal(wrong.body.test.failed_step, 'login');
    const right = await api('PUT', `/v1/migration-links/${id}/credentials`, { token, password: SUPPORT_PASSWORD });
    assert.equal(right.body.connected, true, JSON.stringify(right.body));
    assert.equal(right.body.state, 'connected');
    const again = await api('PUT', `/v1/migration-links/${id}/credentials`, { token, password: SUPPORT_PASSWORD });
    assert.equal(again.status, 404, 'the link is used up');
    assert.equal(again.body.error.code, 'not_found');
    const connected = await step('migration_status', { migration_id: id });
    assert.equal(connected.migration.state, 'connected');
    assert.equal(connected.migration.credentials.set, true);
    const log = await s.app.db
      .selectFrom('mailbox_migration_log')
      .select(['action', 'actor_type', 'detail'])
      .where('migration_id', '=', id)
      .orderBy('id')
      .execute();
    const set = log.find((l) => l.action === 'credentials_set')!;
    assert.equal(set.actor_type, 'api_key', 'in the name of the key that asked for the link');
    assert.equal(JSON.parse(set.detail!).via, 'link');

    // 4. Choose.
    const folders = await step('migration_folders', { migration_id: id });
    assert.ok(folders.data.some((f: { path: string }) => f.path === 'Sent'));
    await step('migration_update', { migration_id: id, folders: ['INBOX', 'Sent'] });

    // 5. Review: no start before the dry run.
    const early = await mcp.call('migration_start', { migration_id: id });
    assert.equal(early.body.error.code, 'migration_state');
    await step('migration_scan', { migration_id: id });
    assert.equal((await step('migration_status', { migration_id: id })).migration.state, 'scanning');
    await drain();
    const ready = await step('migration_status', { migration_id: id });
    assert.equal(ready.migration.state, 'ready', JSON.stringify(ready.migration.attention));
    assert.equal(ready.migration.plan.current, true);
    assert.ok(ready.migration.plan.summary);
    assert.equal(ready.migration.progress.total, 3);
    const preview = await step('migration_preview', { migration_id: id });
    assert.deepEqual(preview.data.map((c: { subject: string }) => c.subject).sort(), ['Refund', 'Where is my order']);

    // 6. Copy.
    await step('migration_start', { migration_id: id });
    await drain();
    const syncing = await step('migration_status', { migration_id: id });
    assert.equal(syncing.migration.state, 'syncing', JSON.stringify(syncing.migration.attention));
    assert.equal(syncing.migration.progress.conversations, 2);
    assert.ok(
      syncing.notices.some((n: string) => /no SMTP account/.test(n)),
      'the status keeps saying SMTP is missing',
    );

    // 7. Switch: the test message, forwarded to the channel's forwarding address.
    const refused = await mcp.call('migration_finish', { migration_id: id });
    assert.equal(refused.body.error.code, 'migration_state', 'no finish before a test message without force');
    await step('migration_probe', { migration_id: id });
    const [probe] = await sink.waitFor(1);
    assert.deepEqual(probe.to, [SUPPORT]);
    const forwarding = syncing.migration.routing.forwarding_address as string;
    assert.match((await sendToIngress(ingressPort(s), { envelope: { from: 'svc@svc.test', to: [forwarding] }, raw: probe.raw })).response, /^250/);
    clock.advance(2 * MINUTE);
    await drain();
    const arrived = await step('migration_status', { migration_id: id });
    assert.ok(arrived.migration.test_message.arrived_at);
    assert.equal(arrived.migration.test_message.route, 'forwarding');

    // 8. Finish.
    const done = await step('migration_finish', { migration_id: id });
    assert.equal(done.migration.state, 'completed');
    assert.equal(done.migration.credentials.set, false);
    assert.equal(done.migration.app_password.deleted_here, true);
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null);
    const conversations = await s.app.db.selectFrom('conversations').select(['subject', 'imported']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(conversations.map((c) => c.subject).sort(), ['Refund', 'Where is my order']);
  });

  test('the passwords appear in no tool answer, API answer, log line, event or activity log', async () => {
    assert.ok(mcp.answers.length > 15);
    const events = await s.app.db.selectFrom('events').select('data').execute();
    const activity = await s.app.db.selectFrom('mailbox_migration_log').select('detail').execute();
    const places: [string, string[]][] = [
      ['tool answers', mcp.answers],
      ['API answers', apiAnswers],
      ['log lines', s.rawLogs],
      ['events', events.map((e) => e.data)],
      ['activity log', activity.map((a) => a.detail ?? '')],
    ];
    assert.ok(events.length > 0 && s.rawLogs.length > 0 && activity.length > 0);
    for (const secret of [SUPPORT_PASSWORD, WRONG_PASSWORD]) {
      for (const [where, texts] of places) assert.ok(!texts.some((t) => t.includes(secret)), `${secret} is not in the ${where}`);
    }
  });
});
