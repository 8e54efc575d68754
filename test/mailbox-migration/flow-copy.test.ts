// A migration's copy against a real Dovecot, through the API (up to the dry run: flow.test.ts):
// threading, status rules, mappings, skips, quiet history (no webhook, no conversation events), the
// old mailbox untouched (files on disk and Dovecot's own rawlog), and a second run that copies
// nothing twice. The scene is flow-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { memberAccess } from '../../src/auth/access.js';
import { readEvents, viewerFor } from '../../src/events/service.js';
import { ALLOWED_COMMANDS } from '../../src/mailbox-migration/sources/imap.js';
import { dovecotMissing } from '../helpers/dovecot.js';
import { daysAgo } from '../helpers/mailbox.js';
import { connectedImapMigration, expectState, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { sceneOf } from '../helpers/scene.js';
import { dryRunChoices, startFlowScene, stopFlowScene } from './flow-scene.js';

describe('mailbox migration: the copy', { skip: dovecotMissing }, () => {
  const scene = sceneOf(startFlowScene, stopFlowScene);
  let migrationId: string;
  before(async () => {
    // A migration connected, with the dry run's choices, planned and ready to start.
    const { s, seed, d, box, api } = scene();
    migrationId = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d);
    assert.equal((await api('PATCH', `/v1/migrations/${migrationId}`, dryRunChoices(scene()))).status, 200);
    assert.equal((await api('POST', `/v1/migrations/${migrationId}/scan`)).status, 202);
    await s.app.jobs.drain();
    assert.equal((await expectState(s, seed.apiKey, migrationId, 'ready')).plan.summary.to_copy, box.toCopy);
  });

  test('the copy: threads, statuses, authors, labels, attachments, contacts, divider; quiet and read-only', async () => {
    const { d, s, seed, rx, box, channelId, agentToken, now, clock, api } = scene();
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
    const { d, s, seed, now, api } = scene();
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
