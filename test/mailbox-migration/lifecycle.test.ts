// Migrations in the data lifecycle: imported mail ages from the day of the import, the activity log
// is kept SVC_MIGRATION_AUDIT_DAYS after the migration ends, and a deleted workspace's migrations
// (with their passwords) are removed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closedConversationsRule, rawEmailsRule } from '../../src/conversations/retention.js';
import { retentionRules, workspaceDataSteps } from '../../src/lifecycle/registry.js';
import { migrationAuditRule, migrationWorkspaceStep } from '../../src/mailbox-migration/lifecycle.js';
import { DAY, ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { expectState, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('migrations in the data lifecycle', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  const now = new Date();
  const clock = new ManualClock(now);

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    d.deliver(SUPPORT, 'INBOX', [
      // Closed at import (90 days old), and open (2 days old).
      { raw: await buildMail({ from: 'old@customer.test', to: SUPPORT, subject: 'Old', messageId: 'old@customer.test', date: daysAgo(now, 90) }), flags: 'S' },
      { raw: await buildMail({ from: 'new@customer.test', to: SUPPORT, subject: 'New', messageId: 'new@customer.test', date: daysAgo(now, 2) }), flags: 'S' },
    ]);
    s = await startTestServer({ clock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_AUDIT_DAYS: '365' } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { address: SUPPORT });
    const token = seed.apiKey;
    id = (
      await s.request('POST', '/v1/migrations', {
        token,
        body: {
          provider: 'imap',
          source_address: SUPPORT,
          imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
          inbox_id: seed.inboxId,
          keep_originals: true,
        },
      })
    ).body.id;
    await s.request('PUT', `/v1/migrations/${id}/credentials`, { token, body: { password: SUPPORT_PASSWORD } });
    await s.request('POST', `/v1/migrations/${id}/test`, { token });
    await s.request('POST', `/v1/migrations/${id}/scan`, { token });
    await s.app.jobs.drain();
    await s.request('POST', `/v1/migrations/${id}/start`, { token });
    await s.app.jobs.drain();
    await expectState(s, token, id, 'syncing');
  });
  after(async () => {
    await s?.stop();
    await d?.stop();
  });

  test('the rules and the deletion step are registered', () => {
    assert.ok(retentionRules.includes(migrationAuditRule));
    assert.ok(workspaceDataSteps.includes(migrationWorkspaceStep));
  });

  // Imported mail goes through the conversation rules, which count from the import.
  const importedMailRule = {
    deleteBatch: async (app: TestServer['app'], at: Date, batch: number) =>
      (await closedConversationsRule.deleteBatch(app, at, batch)) + (await rawEmailsRule.deleteBatch(app, at, batch)),
  };

  test('imported mail ages from the day of the import, not from its original time', async () => {
    await s.request('PATCH', '/v1/workspace', { token: seed.ownerToken, body: { retention_days: 30 } });
    const convs = await s.app.db
      .selectFrom('conversations')
      .select(['id', 'subject', 'status', 'updated_at'])
      .where('workspace_id', '=', seed.workspaceId)
      .execute();
    const old = convs.find((c) => c.subject === 'Old')!;
    assert.equal(old.status, 'closed');
    const originals = await s.app.db
      .selectFrom('messages')
      .select(['id', 'raw_storage_key', 'imported_at'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('kind', '=', 'message')
      .execute();
    assert.equal(originals.length, 2);
    assert.ok(originals.every((o) => o.raw_storage_key && o.imported_at === now.toISOString()));

    assert.equal(await importedMailRule.deleteBatch(s.app, new Date(now.getTime() + 29 * DAY), 1000), 0, 'a 90-day-old message imported today is kept');
    const later = new Date(now.getTime() + 31 * DAY);
    const deleted = await importedMailRule.deleteBatch(s.app, later, 1000);
    assert.equal(deleted, 2, 'the closed conversation and the other original');
    const left = await s.app.db.selectFrom('conversations').select(['id', 'subject']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(
      left.map((c) => c.subject),
      ['New'],
      'the open one stays',
    );
    const kept = await s.app.db
      .selectFrom('messages')
      .select(['raw_storage_key'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('kind', '=', 'message')
      .execute();
    assert.deepEqual(
      kept.map((k) => k.raw_storage_key),
      [null],
      'its original is removed, the message stays',
    );
    await s.app.jobs.drain();
    for (const o of originals) assert.equal(await s.app.storage.exists(o.raw_storage_key!), false, 'files go too');
    assert.equal(await importedMailRule.deleteBatch(s.app, later, 1000), 0);
  });

  test('the activity log is kept SVC_MIGRATION_AUDIT_DAYS after the migration ends', async () => {
    const cancelled = await s.request('POST', `/v1/migrations/${id}/cancel`, { token: seed.apiKey });
    assert.equal(cancelled.body.state, 'cancelled');
    assert.ok(cancelled.body.ended_at);
    assert.equal(cancelled.body.app_password.deleted_here, true);
    const logCount = async () => (await s.app.db.selectFrom('mailbox_migration_log').select('id').where('migration_id', '=', id).execute()).length;
    const before = await logCount();
    assert.ok(before > 5);
    assert.equal(await migrationAuditRule.deleteBatch(s.app, new Date(now.getTime() + 364 * DAY), 1000), 0);
    assert.equal(await logCount(), before);
    assert.equal((await s.request('DELETE', `/v1/migrations/${id}`, { token: seed.apiKey })).status, 204);
    assert.equal((await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey })).status, 404);
    assert.ok(await s.app.db.selectFrom('mailbox_migrations').select('id').where('id', '=', id).executeTakeFirst(), 'kept on record for the audit period');
    const after = new Date(now.getTime() + 366 * DAY);
    let total = 0;
    for (let i = 0; i < 20; i++) {
      const n = await migrationAuditRule.deleteBatch(s.app, after, 3);
      total += n;
      if (n === 0) break;
    }
    assert.ok(total > before);
    assert.equal(await logCount(), 0);
    assert.equal(await s.app.db.selectFrom('mailbox_migrations').select('id').where('id', '=', id).executeTakeFirst(), undefined);
    assert.equal((await s.app.db.selectFrom('mailbox_migration_items').select('source_key').where('migration_id', '=', id).execute()).length, 0);
  });

  test('a deleted workspace loses its migrations, the passwords first', async () => {
    const token = seed.apiKey;
    const other = (
      await s.request('POST', '/v1/migrations', {
        token,
        body: { provider: 'imap', source_address: SUPPORT, imap: { host: '127.0.0.1', port: d.port, tls: 'none' }, inbox_id: seed.inboxId },
      })
    ).body.id;
    await s.request('PUT', `/v1/migrations/${other}/credentials`, { token, body: { password: SUPPORT_PASSWORD } });
    await s.request('POST', `/v1/migrations/${other}/test`, { token });
    await s.request('POST', `/v1/migrations/${other}/scan`, { token });
    await s.app.jobs.drain();
    await s.app.db.updateTable('workspaces').set({ deleted_at: clock.now().toISOString() }).where('id', '=', seed.workspaceId).execute();
    const first = await migrationWorkspaceStep.deleteBatch(s.app, seed.workspaceId, 1);
    assert.equal(first.rows, 1);
    const row = await s.app.db.selectFrom('mailbox_migrations').select(['password_sealed', 'state']).where('id', '=', other).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null, 'the password goes with the first batch');
    for (let i = 0; i < 50; i++) if ((await migrationWorkspaceStep.deleteBatch(s.app, seed.workspaceId, 5)).rows === 0) break;
    assert.equal((await s.app.db.selectFrom('mailbox_migrations').select('id').where('workspace_id', '=', seed.workspaceId).execute()).length, 0);
    assert.equal((await s.app.db.selectFrom('mailbox_migration_items').select('source_key').where('migration_id', '=', other).execute()).length, 0);
  });
});
