// A mailbox migration whose steps two `svc serve` processes on one Postgres database run: the scan
// and the copy store every message once, and mail reaching the old mailbox while both servers sync is
// stored once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/context.js';
import { ensureWorker, workerKey } from '../../src/mailbox-migration/copy/worker.js';
import { iso, MINUTE, systemClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { buildMail } from '../helpers/mailbox.js';
import { fillBulkMailbox, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { json, quietApp, skipWithoutPostgres as skip, stopAll } from '../helpers/multi-process.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

describe('a mailbox migration with two servers running its steps', { skip: skip || dovecotMissing }, () => {
  let d: Dovecot;
  let te: TestEnv;
  let app: App;
  const servers: ChildServer[] = [];
  let migration: { id: string; seed: Seed } | undefined;

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    te = await testEnv({ SVC_MIGRATION_ALLOW_PRIVATE: '1' });
    servers.push(await spawnServer(te.env), await spawnServer(te.env));
    app = quietApp(te.env);
  });
  after(async () => {
    await stopAll(servers, app, te);
    await d?.stop();
  });

  test('scan and copy: every message copied once', async () => {
    const THREADS = 150;
    const total = (await fillBulkMailbox(d, SUPPORT, { threads: THREADS, perThread: 2, now: new Date() })).messages;
    const seed = await seedWorkspace(app);
    await seedEmailChannel(app, seed, { address: SUPPORT });
    const [a, b] = servers;
    const created = await json(`${a.url}/v1/migrations`, {
      method: 'POST',
      token: seed.apiKey,
      body: { provider: 'imap', source_address: SUPPORT, imap: { host: '127.0.0.1', port: d.port, tls: 'none' }, inbox_id: seed.inboxId },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    await json(`${b.url}/v1/migrations/${id}/credentials`, { method: 'PUT', token: seed.apiKey, body: { password: SUPPORT_PASSWORD } });
    assert.equal((await json(`${a.url}/v1/migrations/${id}/test`, { method: 'POST', token: seed.apiKey })).body.ok, true);
    await json(`${b.url}/v1/migrations/${id}/scan`, { method: 'POST', token: seed.apiKey });
    const state = async () => (await json(`${a.url}/v1/migrations/${id}`, { token: seed.apiKey })).body.state;
    await waitUntil(async () => (await state()) === 'ready', 60_000, 'the scan');
    assert.equal((await json(`${b.url}/v1/migrations/${id}/start`, { method: 'POST', token: seed.apiKey })).status, 202);
    await waitUntil(async () => (await state()) === 'syncing', 120_000, 'the copy');
    const m = (await json(`${b.url}/v1/migrations/${id}`, { token: seed.apiKey })).body;
    assert.equal(m.progress.copied, total);
    assert.equal(m.progress.failed, 0);
    const messages = await app.db
      .selectFrom('messages')
      .select('mail_message_id')
      .where('workspace_id', '=', seed.workspaceId)
      .where('kind', '=', 'message')
      .execute();
    assert.equal(messages.length, total, 'every message once');
    assert.equal(new Set(messages.map((r) => r.mail_message_id)).size, total);
    const conversations = await app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(conversations.length, THREADS);
    migration = { id, seed };
  });

  test('sync steps: mail that reaches the old mailbox while both servers sync is stored once', async () => {
    assert.ok(migration, 'the copy above ran');
    const { id, seed } = migration;
    const ROUNDS = 3;
    const PER_ROUND = 8;
    // The old mailbox dates mail to the second: mail from the second the copy ended in would be history.
    const { copy_ended_at } = await app.db.selectFrom('mailbox_migrations').select('copy_ended_at').where('id', '=', id).executeTakeFirstOrThrow();
    const wait = Date.parse(copy_ended_at!) + 1100 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent: string[] = [];
    const stored = () =>
      app.db.selectFrom('messages').select('mail_message_id').where('workspace_id', '=', seed.workspaceId).where('mail_message_id', 'in', sent).execute();
    // A poll under way ends by recording its own time as the last poll, over the one set below: the
    // next round starts only once a poll has been recorded and no run holds the migration's job.
    const pollSettled = async () => {
      const [m, job] = await Promise.all([
        app.db.selectFrom('mailbox_migrations').select('sync_polled_at').where('id', '=', id).executeTakeFirstOrThrow(),
        app.db.selectFrom('jobs').select('lease_until').where('unique_key', '=', workerKey(id)).executeTakeFirst(),
      ]);
      return m.sync_polled_at !== null && (!job?.lease_until || job.lease_until < iso(Date.now()));
    };
    for (let round = 0; round < ROUNDS; round++) {
      await waitUntil(pollSettled, 60_000, `the poll before round ${round}`);
      const batch = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const messageId = `sync-${round}-${i}@customer.test`;
        sent.push(messageId);
        batch.push({
          raw: await buildMail({
            from: `Customer ${i} <c${round}-${i}@customer.test>`,
            to: SUPPORT,
            subject: `New ${round}/${i}`,
            messageId,
            date: new Date(),
          }),
          isNew: true,
        });
      }
      d.deliver(SUPPORT, 'INBOX', batch);
      // The next poll is due now (as two minutes after the last), on whichever server claims it first.
      await app.db
        .updateTable('mailbox_migrations')
        .set({ sync_polled_at: iso(Date.now() - 3 * MINUTE) })
        .where('id', '=', id)
        .execute();
      await ensureWorker({ db: app.db, clock: systemClock }, id, { runAt: new Date(), sooner: true });
      const wanted = sent.length;
      await waitUntil(async () => (await stored()).length >= wanted, 60_000, `round ${round}'s mail`);
    }
    const rows = await stored();
    assert.equal(rows.length, sent.length, 'each new mail stored once');
    assert.equal(new Set(rows.map((r) => r.mail_message_id)).size, sent.length);
    const m = (await json(`${servers[1].url}/v1/migrations/${id}`, { token: seed.apiKey })).body;
    assert.equal(m.state, 'syncing');
    assert.equal(m.sync.new_mail_from_old_mailbox, sent.length, 'each new mail counted once');
    assert.equal(m.progress.failed, 0);
    const items = await app.db.selectFrom('mailbox_migration_items').select('rfc_id').where('migration_id', '=', id).where('rfc_id', 'in', sent).execute();
    assert.equal(items.length, sent.length, 'one item per new mail');
  });
});
