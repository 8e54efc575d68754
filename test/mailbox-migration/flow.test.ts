// A migration from create to syncing against a real Dovecot, through the API: who may do it, the
// state machine, credentials, the connection test, folders, the dry run, the copy (threading,
// status rules, mappings, skips), quiet history (no webhook, no conversation events), and the old
// mailbox untouched (files on disk and Dovecot's own rawlog).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { memberAccess } from '../../src/auth/access.js';
import { readEvents, viewerFor } from '../../src/events/service.js';
import type { MigrationWorker } from '../../src/mailbox-migration/copy/worker.js';
import { ALLOWED_COMMANDS } from '../../src/mailbox-migration/sources/imap.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { daysAgo } from '../helpers/mailbox.js';
import { COLLEAGUE, expectState, fillOldMailbox, type OldMailbox, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhooks.js';

const MAX_MESSAGE = 200_000;

describe('mailbox migration from create to syncing', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let rx: Receiver;
  let box: OldMailbox;
  let channelId: string;
  let ownerEmail: string;
  let agentToken: string;
  let migrationId: string;
  const now = new Date();
  const clock = new ManualClock(now);

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    s = await startTestServer({
      clock,
      env: {
        SVC_MIGRATION_ALLOW_PRIVATE: '1',
        SVC_WEBHOOK_ALLOW_PRIVATE: '1',
        SVC_MIGRATION_MAX_MESSAGE_BYTES: String(MAX_MESSAGE),
        SVC_ATTACHMENT_MAX_BYTES: '50000',
      },
    });
    // Background work runs when the test drains it.
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    channelId = (await seedEmailChannel(s.app, seed, { address: SUPPORT })).id;
    agentToken = (await addPerson(s.app, seed.workspaceId, 'agent')).token;
    box = await fillOldMailbox(d, now, { ownerEmail, bigBytes: MAX_MESSAGE + 50_000 });
    rx = await startReceiver();
  });
  after(async () => {
    await s?.stop();
    await rx?.close();
    await d?.stop();
  });

  const api = (method: string, path: string, body?: unknown, token = seed.apiKey) => s.request(method, path, { token, body });

  test('only owners, admins and keys with migrations:manage and no inbox limit', async () => {
    const { secret: noScope } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'n', scopes: ['conversations:read'] });
    const { secret: limited } = await createApiKey(s.app, {
      workspaceId: seed.workspaceId,
      name: 'l',
      scopes: ['migrations:manage'],
      inboxIds: [seed.inboxId],
    });
    const { secret: scoped } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 's', scopes: ['migrations:manage'] });
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    for (const token of [agentToken, noScope, limited]) {
      assert.equal((await api('GET', '/v1/migrations', undefined, token)).status, 403);
      assert.equal((await api('POST', '/v1/migrations', { provider: 'gmail' }, token)).status, 403);
      assert.equal((await api('GET', '/v1/migrations/presets', undefined, token)).status, 403);
    }
    for (const token of [seed.ownerToken, admin.token, scoped, seed.apiKey]) assert.equal((await api('GET', '/v1/migrations', undefined, token)).status, 200);
  });

  test('presets, detection by domain and MX, and providers that need a sign-in this server lacks', async () => {
    const presets = await api('GET', '/v1/migrations/presets');
    const byId = Object.fromEntries(presets.body.data.map((p: { id: string }) => [p.id, p]));
    assert.deepEqual(byId.gmail.imap, { host: 'imap.gmail.com', port: 993, tls: 'tls' });
    assert.equal(byId.gmail.app_password, 'required');
    assert.equal(byId.google.kind, 'sign_in');
    assert.equal(byId.microsoft.kind, 'sign_in');
    assert.equal(presets.body.data.filter((p: { kind: string }) => p.kind === 'help_desk').length, 2);
    assert.ok(byId.imap && byId.export_file);

    const asked: string[] = [];
    s.app.resolveMx = async (domain) => {
      asked.push(domain);
      if (domain === 'acme-google.test') return [{ exchange: 'aspmx.l.google.com', priority: 1 }];
      if (domain === 'acme-ms.test') return [{ exchange: 'acme-ms-test.mail.protection.outlook.com', priority: 0 }];
      return [];
    };
    const gmail = await api('POST', '/v1/migrations/detect', { address: 'someone@gmail.com' });
    assert.equal(gmail.status, 200);
    assert.equal(gmail.body.provider, 'gmail');
    assert.equal(gmail.body.found_by, 'domain');
    assert.deepEqual(asked, [], 'a known domain needs no lookup');
    const workspace = await api('POST', '/v1/migrations/detect', { address: 'help@acme-google.test' });
    assert.equal(workspace.body.provider, 'gmail');
    assert.equal(workspace.body.found_by, 'mx');
    const ms = await api('POST', '/v1/migrations/detect', { address: 'help@acme-ms.test' });
    assert.equal(ms.body.provider, 'microsoft');
    assert.equal(ms.body.configured, false);
    const other = await api('POST', '/v1/migrations/detect', { address: 'help@nowhere.test' });
    assert.equal(other.body.provider, 'imap');
    assert.equal(other.body.found_by, 'none');
    assert.equal((await api('POST', '/v1/migrations/detect', { address: 'not an address' })).status, 400);

    for (const provider of ['google', 'microsoft']) {
      const r = await api('POST', '/v1/migrations', { provider, source_address: 'x@acme.test' });
      assert.equal(r.status, 409, provider);
      assert.equal(r.body.error.code, 'provider_not_configured');
    }
    const byMx = await api('POST', '/v1/migrations', { source_address: 'help@acme-ms.test' });
    assert.equal(byMx.status, 409);
    assert.equal(byMx.body.error.code, 'provider_not_configured');
    assert.equal((await api('POST', '/v1/migrations', { provider: 'nope' })).status, 400);
    assert.equal((await api('POST', '/v1/migrations', { provider: 'imap' })).status, 400, 'an IMAP server is needed');
    assert.equal((await api('GET', '/v1/migrations')).body.data.length, 0, 'nothing was created by refused requests');
  });

  test('create, connect, test, folders: the password is sealed and never shown', async () => {
    const created = await api('POST', '/v1/migrations', {
      provider: 'imap',
      source_address: SUPPORT,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: seed.inboxId,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const m = created.body;
    migrationId = m.id;
    assert.match(m.id, /^mig_/);
    assert.equal(m.state, 'draft');
    assert.equal(m.channel_id, channelId, "the inbox's e-mail channel is taken");
    assert.equal(m.username, SUPPORT);
    assert.equal(m.close_after_days, 14);
    assert.equal(m.skip_automatic, true);
    assert.equal(m.keep_originals, false);
    assert.deepEqual(m.allowed_actions, ['update', 'delete', 'credentials', 'cancel', 'keep_reading']);
    assert.equal(m.read_only.changes_made_to_provider, 0);

    const early = await api('POST', `/v1/migrations/${m.id}/test`);
    assert.equal(early.status, 409);
    assert.equal(early.body.error.code, 'migration_state');
    assert.equal(early.body.error.state, 'draft');
    assert.deepEqual(early.body.error.allowed_actions, ['update', 'delete', 'credentials', 'cancel', 'keep_reading']);

    const wrong = await api('PUT', `/v1/migrations/${m.id}/credentials`, { password: 'not-the-password' });
    assert.equal(wrong.status, 200);
    const failed = await api('POST', `/v1/migrations/${m.id}/test`);
    assert.equal(failed.status, 200);
    assert.equal(failed.body.ok, false);
    assert.equal(failed.body.failed_step, 'login');
    assert.deepEqual(
      failed.body.steps.map((x: { step: string; status: string }) => `${x.step}:${x.status}`),
      ['dns:ok', 'connect:ok', 'tls:skipped', 'login:failed', 'list:skipped'],
    );
    assert.equal(failed.body.migration.state, 'draft');

    const put = await api('PUT', `/v1/migrations/${m.id}/credentials`, { username: SUPPORT, password: SUPPORT_PASSWORD });
    assert.equal(put.status, 200);
    assert.equal(put.body.credentials.set, true);
    const ok = await api('POST', `/v1/migrations/${m.id}/test`);
    assert.equal(ok.body.ok, true, JSON.stringify(ok.body));
    assert.equal(ok.body.failed_step, null);
    assert.equal(ok.body.migration.state, 'connected');

    // The password is stored sealed, and appears in no answer, log line or event.
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', m.id).executeTakeFirstOrThrow();
    assert.ok(row.password_sealed && !row.password_sealed.includes(SUPPORT_PASSWORD));
    assert.equal(s.app.sealer.open(row.password_sealed), SUPPORT_PASSWORD);
    assert.ok(!JSON.stringify([put.body, ok.body]).includes(SUPPORT_PASSWORD));
    assert.ok(!s.rawLogs.join('').includes(SUPPORT_PASSWORD));
    const events = await s.app.db.selectFrom('events').select('data').where('workspace_id', '=', seed.workspaceId).execute();
    assert.ok(events.length > 0);
    assert.ok(!events.some((e) => e.data.includes(SUPPORT_PASSWORD) || e.data.includes('not-the-password')));
    const activity = await api('GET', `/v1/migrations/${m.id}/activity`);
    assert.ok(!JSON.stringify(activity.body).includes(SUPPORT_PASSWORD));
    assert.deepEqual(activity.body.data.map((e: { action: string }) => e.action).reverse(), [
      'created',
      'credentials_set',
      'test',
      'credentials_replaced',
      'test',
      'connected',
    ]);

    const folders = await api('GET', `/v1/migrations/${m.id}/folders`);
    assert.equal(folders.status, 200);
    const f = Object.fromEntries(folders.body.data.map((x: { path: string }) => [x.path, x]));
    assert.equal(f.INBOX.chosen, true);
    assert.equal(f.Sent.chosen, true);
    assert.equal(f.Archive.chosen, false);
    assert.equal(f.INBOX.messages, 10);
    for (const never of ['Junk', 'Trash', 'Drafts']) {
      assert.equal(f[never].never_read, true);
      assert.equal(f[never].messages, null, 'not even counted');
    }
  });

  test('the connection test is rate limited', async () => {
    // Two tests ran already in this window.
    for (let i = 0; i < 3; i++) assert.equal((await api('POST', `/v1/migrations/${migrationId}/test`)).status, 200);
    const limited = await api('POST', `/v1/migrations/${migrationId}/test`);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    clock.advance(11 * 60_000);
    assert.equal((await api('POST', `/v1/migrations/${migrationId}/test`)).status, 200);
  });

  test('choices, validation, and the dry run: counts, skips and reasons, contacts, labels, preview; nothing imported', async () => {
    const id = migrationId;
    const bad = [
      { date_from: '2024-13-01' },
      { close_after_days: -1 },
      { channel_id: 'ch_nope' },
      { team_members: { 'not an address': null } },
      { team_members: { [COLLEAGUE]: 'per_unknown' } },
      { folders: [] },
      { date_from: '2024-02-01', date_to: '2024-01-01' },
      { unknown_field: 1 },
    ];
    for (const body of bad) {
      const r = await api('PATCH', `/v1/migrations/${id}`, body);
      assert.ok(r.status === 400 || r.status === 404, `${JSON.stringify(body)} → ${r.status}`);
    }
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).body.error.code, 'migration_state', 'no start before a dry run');
    const patched = await api('PATCH', `/v1/migrations/${id}`, {
      folders: ['INBOX', 'Sent', 'Archive', 'Junk'],
      date_from: daysAgo(now, 400).toISOString().slice(0, 10),
      folder_labels: { Archive: 'Archived' },
      team_members: { [COLLEAGUE]: null, [ownerEmail]: seed.ownerId },
      keep_originals: true,
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.state, 'connected');

    const scan = await api('POST', `/v1/migrations/${id}/scan`);
    assert.equal(scan.status, 202);
    assert.equal(scan.body.state, 'scanning');
    assert.deepEqual(scan.body.allowed_actions, ['cancel', 'keep_reading']);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    const plan = ready.plan.summary;
    assert.equal(ready.plan.current, true);
    assert.equal(plan.total, box.total, 'every message of the chosen folders, duplicates and skipped ones included');
    assert.equal(plan.to_copy, box.toCopy);
    assert.equal(plan.conversations, box.conversations);
    assert.equal(plan.duplicates, 1);
    assert.deepEqual(plan.skipped, { automatic_only: 1, too_large: 1, outside_date_range: 1, team_only: 1 });
    assert.ok(plan.skip_reasons.team_only && plan.skip_reasons.never_read);
    const folders = Object.fromEntries(plan.folders.map((f: { path: string }) => [f.path, f]));
    assert.equal(folders.INBOX.messages, 10);
    assert.equal(folders.Sent.messages, 4);
    assert.equal(folders.Archive.messages, 2);
    assert.equal(folders.Archive.duplicates + folders.INBOX.duplicates, 1);
    assert.equal(folders.Archive.label, 'Archived');
    assert.equal(folders.Junk.never_read, true);
    assert.equal(folders.Junk.messages, 0);
    assert.equal(plan.contacts_to_create, 7, 'ada, bob, carol, dan, gina, hank, ivy');
    assert.deepEqual(plan.labels, ['Archived']);
    assert.ok(plan.estimated_bytes > 0 && plan.estimated_seconds > 0);
    assert.equal(ready.progress.total, box.total);
    assert.equal(ready.progress.copied, 0);
    assert.deepEqual(ready.allowed_actions, ['update', 'delete', 'credentials', 'test', 'folders', 'scan', 'preview', 'start', 'cancel', 'keep_reading']);

    const preview = await api('GET', `/v1/migrations/${id}/preview`);
    assert.equal(preview.status, 200);
    const subjects = preview.body.data.map((c: { subject: string }) => c.subject);
    assert.deepEqual(
      subjects,
      ['Printer on fire', 'Printer on fire', 'Login broken', 'Duplicate me', 'No id', 'Old archived', 'Invoice question'],
      'newest first; two threads share a subject',
    );
    const [a, dThread, c] = preview.body.data;
    assert.equal(a.status, 'open');
    assert.equal(a.messages.length, 3);
    assert.equal(a.contact.email, 'ada@customer.test');
    assert.equal(a.contact.exists, false);
    assert.equal(dThread.messages.length, 1, 'never joined by subject');
    assert.equal(c.status, 'pending');
    assert.equal(preview.body.data[6].status, 'closed');
    assert.equal(preview.body.data[6].messages[1].author_member_id, seed.ownerId);
    assert.deepEqual(preview.body.data[3].labels, ['Archived']);

    const counts = await s.app.db
      .selectFrom('conversations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', seed.workspaceId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(counts.n), 0, 'nothing is imported before start');
  });

  test('a change of a choice plans again', async () => {
    const patched = await api('PATCH', `/v1/migrations/${migrationId}`, { skip_automatic: false });
    assert.equal(patched.body.state, 'scanning');
    await s.app.jobs.drain();
    const m = await expectState(s, seed.apiKey, migrationId, 'ready');
    assert.equal(m.plan.summary.to_copy, box.toCopy + 1);
    assert.equal(m.plan.summary.skipped.automatic_only, undefined);
    await api('PATCH', `/v1/migrations/${migrationId}`, { skip_automatic: true });
    await s.app.jobs.drain();
    assert.equal((await expectState(s, seed.apiKey, migrationId, 'ready')).plan.summary.to_copy, box.toCopy);
  });

  test('the copy: threads, statuses, authors, labels, attachments, contacts, divider; quiet and read-only', async () => {
    const id = migrationId;
    const before = d.snapshot(SUPPORT);
    const flagsBefore = d.doveadm(['fetch', '-u', SUPPORT, 'uid flags', 'mailbox', 'INBOX', 'all']);
    const hook = await api('POST', '/v1/webhooks', { url: `${rx.url}/hook` });
    assert.equal(hook.status, 201);
    const eventsBefore = await s.app.db.selectFrom('events').select('seq').where('workspace_id', '=', seed.workspaceId).execute();

    const started = await api('POST', `/v1/migrations/${id}/start`);
    assert.equal(started.status, 202);
    assert.equal(started.body.state, 'copying');
    assert.deepEqual(started.body.allowed_actions, ['preview', 'pause', 'cancel', 'retry', 'keep_reading']);
    // Everyone who sees the inbox sees the banner while the copy runs (agents too, who may not read migrations).
    const duringCopy = await s.request('GET', '/v1/overview', { token: agentToken });
    assert.equal(duringCopy.status, 200);
    assert.deepEqual(duringCopy.body.importing, [{ inbox_id: seed.inboxId, state: 'copying', percent: 0 }]);
    assert.equal((await s.request('GET', `/v1/migrations/${id}`, { token: agentToken })).status, 403);
    await s.app.jobs.drain();
    const done = await expectState(s, seed.apiKey, id, 'syncing');
    assert.deepEqual((await s.request('GET', '/v1/overview', { token: agentToken })).body.importing, [], 'the banner goes once the copy ended');
    assert.equal(done.progress.copied, box.toCopy);
    assert.equal(done.progress.failed, 0);
    assert.equal(done.progress.conversations, box.conversations);
    assert.equal(done.progress.percent, 100);
    assert.ok(done.copy_ended_at);

    const db = s.app.db;
    const convs = await db.selectFrom('conversations').selectAll().where('workspace_id', '=', seed.workspaceId).orderBy('created_at').execute();
    assert.equal(convs.length, box.conversations);
    assert.ok(convs.every((c) => c.imported === 1 && c.channel_id === channelId && c.inbox_id === seed.inboxId));
    const listed = await s.request('GET', '/v1/conversations?sort=activity&limit=200', { token: seed.ownerToken });
    assert.equal(listed.body.data.length, box.conversations);
    assert.ok(
      listed.body.data.every((c: { unread: boolean }) => c.unread === false),
      'imported mail is never unread',
    );
    const bySubject = (subject: string) => convs.filter((c) => c.subject === subject);
    assert.equal(bySubject('Printer on fire').length, 2, 'two threads with the same subject stay apart');
    const messagesOf = (cid: string) => db.selectFrom('messages').selectAll().where('conversation_id', '=', cid).orderBy('id').execute();
    const contactOf = async (email: string) =>
      (
        await db
          .selectFrom('contact_emails')
          .select('contact_id')
          .where('workspace_id', '=', seed.workspaceId)
          .where('email', '=', email)
          .executeTakeFirstOrThrow()
      ).contact_id;

    const ada = await contactOf('ada@customer.test');
    const a = convs.find((c) => c.contact_id === ada)!;
    assert.equal(a.status, 'open', 'the customer wrote last, within 14 days');
    assert.equal(a.created_at, daysAgo(now, 3).toISOString().slice(0, 19) + '.000Z', 'original time kept');
    const am = await messagesOf(a.id);
    assert.deepEqual(
      am.map((x) => `${x.kind}:${x.direction}`),
      ['message:in', 'message:out', 'message:in', 'event:out'],
    );
    assert.equal(am[1].author_type, 'system', 'team mail from an unmapped address');
    assert.deepEqual(JSON.parse(am[1].details!).original_from, { name: 'Acme Support', address: SUPPORT });
    assert.equal(am[0].author_contact_id, ada);
    assert.match(am[0].body, /on fire/);
    assert.ok(am[0].raw_storage_key && (await s.app.storage.exists(am[0].raw_storage_key)), 'keep originals stores the source');
    assert.equal(JSON.parse(am[3].details!).type, 'imported_divider');
    assert.ok(am[3].created_at > am[2].created_at, 'the divider follows the last imported message');

    const b = convs.find((c) => c.subject === 'Invoice question')!;
    assert.equal(b.status, 'closed', 'last message older than close-after days');
    const bm = await messagesOf(b.id);
    assert.equal(bm[1].author_type, 'member');
    assert.equal(bm[1].author_person_id, seed.ownerId, 'team mail from a mapped member');
    const c = convs.find((x) => x.subject === 'Login broken')!;
    assert.equal(c.status, 'pending', 'the team wrote last');
    const cm = await messagesOf(c.id);
    const files = await db.selectFrom('attachments').selectAll().where('message_id', '=', cm[0].id).execute();
    assert.deepEqual(
      files.map((x) => x.filename),
      ['screenshot.png'],
    );
    assert.equal(cm[0].attachments_omitted, 2, 'an executable and a file over the size limit stay in the original');
    const dup = convs.find((x) => x.subject === 'Duplicate me')!;
    const labels = await db.selectFrom('conversation_labels').select(['conversation_id', 'label']).execute();
    assert.deepEqual(
      labels.filter((l) => l.conversation_id === dup.id).map((l) => l.label),
      ['Archived'],
    );
    assert.equal((await messagesOf(dup.id)).filter((x) => x.kind === 'message').length, 1, 'one copy of a message in two folders');
    const arch = convs.find((x) => x.subject === 'Old archived')!;
    assert.equal(arch.status, 'closed');
    assert.deepEqual(
      labels.filter((l) => l.conversation_id === arch.id).map((l) => l.label),
      ['Archived'],
    );
    assert.ok(
      convs.find((x) => x.subject === 'No id'),
      'a message without Message-ID is copied',
    );
    assert.ok(!convs.some((x) => ['Out of office', 'Huge', 'Ancient', 'Internal note'].includes(x.subject ?? '')));
    assert.ok(
      convs.every((x) => x.updated_at === clock.now().toISOString()),
      'retention counts from the day of the import',
    );

    const created = await db.selectFrom('mailbox_migration_contacts').select('contact_id').where('migration_id', '=', id).execute();
    assert.equal(created.length, 7);

    // Quiet: no conversation or message events, no webhook deliveries; only migration events (admins).
    await s.app.jobs.drain();
    const events = await db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', seed.workspaceId)
      .where('seq', '>', eventsBefore.length ? Math.max(...eventsBefore.map((e) => Number(e.seq))) : 0)
      .execute();
    assert.ok(events.length > 0);
    assert.ok(
      events.every((e) => e.type.startsWith('migration.') && e.audience === 'admins' && e.webhook === 0),
      JSON.stringify(events.map((e) => e.type)),
    );
    assert.ok(events.some((e) => e.type === 'migration.progress'));
    assert.ok(events.some((e) => e.type === 'migration.updated' && JSON.parse(e.data).migration.state === 'syncing'));
    assert.equal((await db.selectFrom('webhook_deliveries').selectAll().execute()).length, 0);
    assert.equal(rx.received.length, 0);
    const ownerView = viewerFor(memberAccess(seed.workspaceId, seed.ownerId, 'owner', 'ses'));
    const agentView = viewerFor(memberAccess(seed.workspaceId, 'per_agent', 'agent', 'ses'));
    const seen = await readEvents(s.app, ownerView, 0, 500);
    const agentSeen = await readEvents(s.app, agentView, 0, 500);
    assert.ok(!seen.expired && seen.events.some((e) => e.type === 'migration.progress'));
    assert.ok(!agentSeen.expired && !agentSeen.events.some((e) => e.type.startsWith('migration.')));
    const outbound = await db.selectFrom('jobs').select('kind').where('kind', '=', 'email.send').execute();
    assert.equal(outbound.length, 0, 'no mail is sent for imported history');

    // The old mailbox: same files (names carry the flags; new/ stays new), same flags, allowed commands only.
    assert.deepEqual([...d.snapshot(SUPPORT)].sort(), [...before].sort());
    assert.equal(d.doveadm(['fetch', '-u', SUPPORT, 'uid flags', 'mailbox', 'INBOX', 'all']), flagsBefore);
    assert.ok([...before.keys()].some((k) => k.startsWith('new/')));
    await s.server.parts['mailbox-migration'].stop();
    const lines = d.rawlogCommands(SUPPORT);
    for (const line of lines) {
      const m = /^\d+\.\d+ \S+ (UID \S+|\S+)/.exec(line);
      if (!m) continue;
      const name = m[1].toUpperCase().replace(/^UID /, '');
      assert.ok(ALLOWED_COMMANDS.has(name), line);
      if (name === 'FETCH') assert.doesNotMatch(line, /\bBODY\[|\bBINARY\[|\bRFC822(?!\.SIZE|\.HEADER)\b/i, line);
    }
    assert.ok(
      lines.some((l) => /UID FETCH .*BODY\.PEEK\[\]/.test(l)),
      'messages were read with BODY.PEEK[]',
    );
    assert.ok(!lines.some((l) => /EXAMINE "?(Junk|Trash|Drafts)/.test(l)), 'spam, trash and drafts are never opened');
  });

  test('running the same mailbox again copies nothing twice', async () => {
    const second = await api('POST', '/v1/migrations', {
      provider: 'imap',
      source_address: SUPPORT,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: seed.inboxId,
      folders: ['INBOX', 'Sent', 'Archive'],
      date_from: daysAgo(now, 400).toISOString().slice(0, 10),
    });
    const id = second.body.id;
    await api('PUT', `/v1/migrations/${id}/credentials`, { password: SUPPORT_PASSWORD });
    assert.equal((await api('POST', `/v1/migrations/${id}/test`)).body.ok, true);
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    const messagesBefore = await s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    await api('POST', `/v1/migrations/${id}/start`);
    await s.app.jobs.drain();
    const m = await expectState(s, seed.apiKey, id, 'syncing');
    const copiedItems = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['folder', 'subject', 'rfc_id', 'status'])
      .where('migration_id', '=', id)
      .where('status', '=', 'copied')
      .execute();
    assert.equal(m.progress.copied, 0, JSON.stringify(copiedItems));
    const messagesAfter = await s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(messagesAfter.length, messagesBefore.length, 'every message was known (Message-ID, or the content of one without)');
    const cancel = await api('POST', `/v1/migrations/${id}/cancel`);
    assert.equal(cancel.body.state, 'cancelled');
    assert.equal(cancel.body.credentials.set, false, 'cancel deletes the password');
    assert.equal(
      (await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', id).executeTakeFirstOrThrow()).password_sealed,
      null,
    );
    assert.equal((await api('POST', `/v1/migrations/${id}/pause`)).body.error.code, 'migration_state');
  });
});
