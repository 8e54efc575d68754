// A migration from create to syncing against a real Dovecot, through the API, up to the copy: who
// may do it, the state machine, credentials, the connection test, folders and the dry run. The copy
// itself (threading, status rules, mappings, skips, quiet history, the old mailbox untouched):
// flow-copy.test.ts; the scene is flow-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { dovecotMissing } from '../helpers/dovecot.js';
import { addPerson } from '../helpers/fixtures.js';
import { COLLEAGUE, expectState, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { sceneOf } from '../helpers/scene.js';
import { dryRunChoices, startFlowScene, stopFlowScene } from './flow-scene.js';

describe('mailbox migration from create to the dry run', { skip: dovecotMissing }, () => {
  const scene = sceneOf(startFlowScene, stopFlowScene);
  let migrationId: string;

  test('only owners, admins and keys with migrations:manage and no inbox limit', async () => {
    const { s, seed, agentToken, api } = scene();
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
    const { s, api } = scene();
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
    const { d, s, seed, channelId, api } = scene();
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
    const { clock, api } = scene();
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
    const { s, seed, box, api } = scene();
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
    const patched = await api('PATCH', `/v1/migrations/${id}`, dryRunChoices(scene()));
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
    const { s, seed, box, api } = scene();
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
});
