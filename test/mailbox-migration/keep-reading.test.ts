// Keeping the mailbox read live after the move (issue 38), against a real Dovecot (plain logins and
// an oauth2 passdb asking the loopback OAuth fake): with keep_reading the completion moves the
// migration's password (or Google grant) to the channel's reader, which connects with no new
// credentials and reads the mail that reached the old mailbox after the migration's last sync
// exactly once; the migration's password is gone. Off: no reader. A channel that reads a mailbox
// already keeps it (logged). The sync limit hands over too; a cancel never does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DAY, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { seedEmailChannel, shownChannel } from '../helpers/mail.js';
import { buildMail, daysAgo, newMessageId } from '../helpers/mailbox.js';
import { expectState } from '../helpers/migration.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, signIn, startSignInScene } from '../helpers/sign-in.js';

const PASSWORD = 'app-pass-keep-0001';
const CLIENTS = { google: { id: 'keep-google.apps.test', secret: 'keep-google-secret' }, microsoft: { id: 'keep-ms-0001', secret: 'keep-ms-secret' } };
const HANDED = 'handed@acme.test';
const OFF = 'off@acme.test';
const READING = 'reading@acme.test';
const OTHER = 'other@acme.test';
const LIMIT = 'limit@acme.test';
const CANCEL = 'cancel@acme.test';
const GMAIL = 'support@gmail-keep.test';

const uidsOf = (rows: { path: string; uid_validity: string | null; scanned_uid: number }[], path: string) => {
  const row = rows.find((r) => r.path === path)!;
  return [row.uid_validity, Number(row.scanned_uid)] as const;
};

describe('keep reading the mailbox live after the move', { skip: dovecotMissing }, () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  const now = new Date();
  const clock = new ManualClock(now);

  before(async () => {
    scene = await startSignInScene({
      clients: CLIENTS,
      dovecot: {
        prepare: async (dovecot) => {
          for (const user of [HANDED, OFF, READING, OTHER, LIMIT, CANCEL, GMAIL]) {
            dovecot.addUser(user, PASSWORD);
            dovecot.deliver(user, 'INBOX', [
              {
                raw: await buildMail({
                  from: 'Hana <hana@customer.test>',
                  to: user,
                  subject: `History of ${user}`,
                  messageId: `history.${user}`,
                  date: daysAgo(now, 2),
                }),
                flags: 'S',
                receivedAt: daysAgo(now, 2),
              },
            ]);
          }
        },
      },
      clock,
      env: { SVC_MAILBOX_READER_POLL_SECONDS: '1' },
      stopJobs: true,
    });
    ({ fake, d, s, seed } = scene);
  });
  after(() => scene?.stop());

  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const drain = () => s.app.jobs.drain();
  const copies = async (rfcId: string) =>
    (await s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).where('mail_message_id', '=', rfcId).execute()).length;
  const readerOf = (channelId: string) => s.app.db.selectFrom('mailbox_readers').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
  const migrationRow = (id: string) => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const activity = async (id: string) => (await api('GET', `/v1/migrations/${id}/activity?limit=100`)).body.data as { action: string; detail: any }[];
  const channelView = (id: string) => shownChannel(s, seed.apiKey, id);

  async function deliver(user: string, subject: string): Promise<string> {
    const id = newMessageId('customer.test');
    d.deliver(user, 'INBOX', [{ raw: await buildMail({ from: 'Ada <ada@customer.test>', to: user, subject, messageId: id, date: new Date() }), isNew: true }]);
    return id;
  }

  /** The migration's sync reads the old mailbox once more (two minutes later). */
  async function poll() {
    clock.advance(2 * MINUTE);
    await drain();
  }

  /** A migration of `user` (IMAP with a password) into a new channel with that address, run to syncing. */
  async function toSyncing(user: string): Promise<{ id: string; channel: string }> {
    const channel = (await seedEmailChannel(s.app, seed, { address: user })).id;
    const created = await api('POST', '/v1/migrations', {
      provider: 'imap',
      source_address: user,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: seed.inboxId,
      channel_id: channel,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.deepEqual(created.body.keep_reading, {
      on: false,
      possible: true,
      not_possible_reason: null,
      channel_id: channel,
      channel_name: 'Support mail',
      channel_inbox_id: seed.inboxId,
      channel_reads_a_mailbox: false,
      result: null,
    });
    assert.ok(created.body.allowed_actions.includes('keep_reading'));
    assert.equal((await api('PUT', `/v1/migrations/${id}/credentials`, { password: PASSWORD })).status, 200);
    assert.equal((await api('POST', `/v1/migrations/${id}/test`)).body.ok, true);
    await api('POST', `/v1/migrations/${id}/scan`);
    await drain();
    await expectState(s, seed.apiKey, id, 'ready');
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    return { id, channel };
  }

  test('keep_reading: the finish hands the password to the channel’s reader; mail after the last sync is read exactly once', async () => {
    const { id, channel } = await toSyncing(HANDED);
    const chosen = await api('PUT', `/v1/migrations/${id}/keep-reading`, { keep_reading: true });
    assert.equal(chosen.status, 200, JSON.stringify(chosen.body));
    assert.equal(chosen.body.keep_reading.on, true);
    assert.equal((await api('PUT', `/v1/migrations/${id}/keep-reading`, { keep_reading: 'yes' })).status, 400);
    // Mail read by the migration's last sync, then mail that arrives after it.
    const synced = await deliver(HANDED, 'Seen by the sync');
    await poll();
    assert.equal(await copies(synced), 1);
    const sealed = (await migrationRow(id)).password_sealed!;
    assert.ok(sealed);
    const between = await deliver(HANDED, 'After the last sync, before the reader');
    assert.equal(await readerOf(channel), undefined, 'no reader before the completion');

    const done = await api('POST', `/v1/migrations/${id}/finish`, { force: true });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.state, 'completed');
    assert.equal(done.body.credentials.set, false);
    assert.equal(done.body.keep_reading.result, 'handed_over');
    assert.match(done.body.app_password.message, /moved to the channel/);
    assert.equal((await migrationRow(id)).password_sealed, null, 'the migration keeps no password');
    const reader = (await readerOf(channel))!;
    assert.equal(reader.kind, 'imap');
    assert.equal(reader.host, '127.0.0.1');
    assert.equal(reader.port, d.port);
    assert.equal(reader.tls, 'none');
    assert.equal(reader.username, HANDED);
    assert.equal(reader.password_sealed, sealed, 'the same sealed password, moved');
    const folders = await s.app.db.selectFrom('mailbox_reader_folders').selectAll().where('channel_id', '=', channel).execute();
    // INBOX and Sent start where the sync read last (same UIDVALIDITY).
    const synced_folders = await s.app.db.selectFrom('mailbox_migration_folders').selectAll().where('migration_id', '=', id).execute();
    assert.deepEqual(folders.map((f) => [f.role, f.path, f.uid_validity, f.last_uid]).sort(), [
      ['inbox', 'INBOX', ...uidsOf(synced_folders, 'INBOX')],
      ['sent', 'Sent', ...uidsOf(synced_folders, 'Sent')],
    ]);

    // The reader connects with what it was handed and reads the mail the sync had not seen, once.
    await waitUntil(async () => ['idle', 'polling'].includes((await channelView(channel)).reader?.state), 15_000, 'the reader to connect');
    await waitUntil(async () => (await copies(between)) > 0, 15_000, 'the mail after the last sync');
    const live = await deliver(HANDED, 'Live after the move');
    await waitUntil(async () => (await copies(live)) > 0, 15_000, 'new mail read live');
    await sleep(1500);
    assert.equal(await copies(between), 1, 'read exactly once');
    assert.equal(await copies(synced), 1, 'mail the sync read is not read again');
    assert.equal(await copies(`history.${HANDED}`), 1, 'history is not read again');

    const log = await activity(id);
    const handed = log.find((e) => e.action === 'reading_handed_over')!;
    assert.ok(handed, JSON.stringify(log.map((e) => e.action)));
    assert.deepEqual(handed.detail.folders_from_sync, ['inbox', 'sent']);
    assert.equal(handed.detail.kind, 'imap');
    const events = await s.app.db.selectFrom('events').select('data').where('workspace_id', '=', seed.workspaceId).execute();
    for (const text of [JSON.stringify(done.body), JSON.stringify(log), JSON.stringify(events), JSON.stringify(await channelView(channel))]) {
      assert.ok(!text.includes(PASSWORD) && !text.includes(sealed), 'nothing secret in answers, logs or events');
    }
    // Ended: the choice cannot change any more.
    assert.equal((await api('PUT', `/v1/migrations/${id}/keep-reading`, { keep_reading: false })).status, 409);
  });

  test('keep_reading off: no reader; the password is deleted', async () => {
    const { id, channel } = await toSyncing(OFF);
    const done = await api('POST', `/v1/migrations/${id}/finish`, { force: true, keep_reading: false });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.keep_reading.on, false);
    assert.equal(done.body.keep_reading.result, null);
    assert.equal(await readerOf(channel), undefined);
    assert.equal((await migrationRow(id)).password_sealed, null);
    assert.ok(!(await activity(id)).some((e) => e.action.startsWith('reading_hand')));
  });

  test('a channel that reads a mailbox already keeps it; the skip is logged', async () => {
    const { id, channel } = await toSyncing(READING);
    const reading = await api('PATCH', `/v1/channels/${channel}`, {
      reading: { kind: 'imap', host: '127.0.0.1', port: d.port, tls: 'none', username: OTHER, password: PASSWORD },
    });
    assert.equal(reading.status, 200, JSON.stringify(reading.body));
    const before = (await readerOf(channel))!;
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.keep_reading.channel_reads_a_mailbox, true);
    // Given with the finish: saved with the completion.
    const done = await api('POST', `/v1/migrations/${id}/finish`, { force: true, keep_reading: true });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.keep_reading.on, true);
    assert.equal(done.body.keep_reading.result, 'channel_reads_a_mailbox');
    const afterwards = (await readerOf(channel))!;
    assert.equal(afterwards.username, OTHER);
    assert.equal(afterwards.password_sealed, before.password_sealed);
    assert.equal(afterwards.created_at, before.created_at);
    assert.equal((await migrationRow(id)).password_sealed, null);
    const skipped = (await activity(id)).find((e) => e.action === 'reading_handover_skipped');
    assert.equal(skipped?.detail.reason, 'channel_reads_a_mailbox');
  });

  test('keep_reading needs an e-mail channel (409); cancelling never hands over', async () => {
    const created = await api('POST', '/v1/migrations', { provider: 'export_file', inbox_id: seed.inboxId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.keep_reading.possible, false);
    assert.equal(created.body.keep_reading.not_possible_reason, 'not_a_mailbox');
    const refused = await api('PUT', `/v1/migrations/${created.body.id}/keep-reading`, { keep_reading: true });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'migration_state');

    const { id, channel } = await toSyncing(CANCEL);
    assert.equal((await api('PUT', `/v1/migrations/${id}/keep-reading`, { keep_reading: true })).status, 200);
    assert.equal((await api('POST', `/v1/migrations/${id}/cancel`)).status, 200);
    assert.equal(await readerOf(channel), undefined);
    assert.equal((await migrationRow(id)).password_sealed, null);
  });

  test('Google: the sign-in moves to the channel, whose reader logs in with it (no second sign-in)', async () => {
    const channel = (await seedEmailChannel(s.app, seed, { address: GMAIL })).id;
    const created = await api('POST', '/v1/migrations', {
      provider: 'google',
      source_address: GMAIL,
      inbox_id: seed.inboxId,
      channel_id: channel,
      folders: ['INBOX'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.equal((await api('PUT', `/v1/migrations/${id}/keep-reading`, { keep_reading: true })).status, 200);
    const started = await api('PUT', `/v1/migrations/${id}/credentials`, {});
    await signIn(s, started.body.sign_in.url);
    assert.equal((await api('POST', `/v1/migrations/${id}/test`)).body.ok, true);
    await api('POST', `/v1/migrations/${id}/scan`);
    await drain();
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    const between = await deliver(GMAIL, 'Gmail after the last sync');
    const signInsBefore = fake.tokenRequests.filter((r) => r.grant_type === 'authorization_code').length;

    const done = await api('POST', `/v1/migrations/${id}/finish`, { force: true });
    assert.equal(done.body.keep_reading.result, 'handed_over', JSON.stringify(done.body));
    assert.equal((await migrationRow(id)).password_sealed, null);
    const grant = await s.app.db.selectFrom('channel_grants').selectAll().where('channel_id', '=', channel).executeTakeFirstOrThrow();
    assert.equal(grant.provider, 'google');
    assert.equal(grant.account, GMAIL);
    assert.equal(grant.state, 'ok');
    assert.equal((await readerOf(channel))!.kind, 'google');
    await waitUntil(async () => (await channelView(channel)).reader?.state === 'idle', 15_000, 'the reader to connect');
    await waitUntil(async () => (await copies(between)) > 0, 15_000, 'the mail after the last sync');
    const live = await deliver(GMAIL, 'Gmail live');
    await waitUntil(async () => (await copies(live)) > 0, 15_000, 'new mail read live');
    assert.equal(await copies(between), 1);
    assert.equal(fake.tokenRequests.filter((r) => r.grant_type === 'authorization_code').length, signInsBefore, 'no second sign-in');
    const view = await channelView(channel);
    assert.equal(view.signed_in.account, GMAIL);
    assert.ok(!JSON.stringify(view).match(/access_token|refresh_token/));
    const handed = (await activity(id)).find((e) => e.action === 'reading_handed_over')!;
    assert.equal(handed.detail.sign_in, 'moved');
  });

  test('the sync limit completes the migration and hands over too', async () => {
    const { id, channel } = await toSyncing(LIMIT);
    assert.equal((await api('PUT', `/v1/migrations/${id}/keep-reading`, { keep_reading: true })).status, 200);
    clock.advance(s.app.config.migration.syncMaxDays * DAY + MINUTE);
    await drain();
    const done = await expectState(s, seed.apiKey, id, 'completed');
    assert.equal(done.end_reason, 'sync_limit');
    assert.equal(done.keep_reading.result, 'handed_over');
    assert.equal((await readerOf(channel))?.kind, 'imap');
    assert.equal((await migrationRow(id)).password_sealed, null);
    await waitUntil(async () => ['idle', 'polling'].includes((await channelView(channel)).reader?.state), 15_000, 'the reader to connect');
  });
});
