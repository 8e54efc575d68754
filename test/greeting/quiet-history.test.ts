// The spec's quiet history against a real Dovecot: a migration imports mail into an inbox with the
// greeting and satisfaction ratings switched on, and nothing is sent: no greeting for history or for
// new mail read while syncing, no rating request when an imported conversation is closed, and no
// imported conversation or reply in the reports.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { connectedImapMigration, expectState, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('a migration with greeting and ratings switched on sends nothing', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let te: TestEnv;
  let replies: SmtpSink;
  let seed: Seed;
  let id: string;
  const now = new Date();
  const clock = new ManualClock(now);
  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const drain = () => s.app.jobs.drain();

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    replies = await startSmtpSink(SINK_LOGIN);
    te = await testEnv({ SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_INGRESS_SECRET: INGRESS_SECRET });
    s = await startTestServer({ clock, testEnv: te });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Tina <tina@customer.test>', to: SUPPORT, subject: 'T1', messageId: 't1@customer.test', date: daysAgo(now, 30) }),
        flags: 'S',
        receivedAt: daysAgo(now, 30),
      },
      {
        raw: await buildMail({ from: 'Tom <tom@customer.test>', to: SUPPORT, subject: 'T2', messageId: 't2@customer.test', date: daysAgo(now, 2) }),
        flags: 'S',
        receivedAt: daysAgo(now, 2),
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'tina@customer.test',
          subject: 'Re: T1',
          messageId: 't1-answer@acme.test',
          inReplyTo: 't1@customer.test',
          references: ['t1@customer.test'],
          date: daysAgo(now, 29),
        }),
        flags: 'S',
        receivedAt: daysAgo(now, 29),
      },
    ]);
  });
  after(async () => {
    await s?.stop();
    await te?.cleanup();
    await replies?.close();
    await d?.stop();
  });

  test('history, new mail while syncing and closing imported conversations send nothing and count nothing', async () => {
    assert.equal((await api('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { enabled: true })).status, 200);
    assert.equal((await api('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { enabled: true })).status, 200);
    const channel = await seedEmailChannel(s.app, seed, { address: SUPPORT, smtpPort: replies.port });
    id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d, { channelId: channel.id });
    await api('POST', `/v1/migrations/${id}/scan`);
    await drain();
    await expectState(s, seed.apiKey, id, 'ready');
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    const imported = await s.app.db.selectFrom('conversations').selectAll().where('workspace_id', '=', seed.workspaceId).where('imported', '=', 1).execute();
    assert.equal(imported.length, 2);

    // New mail read from the old mailbox while syncing: stored as new mail, without the greeting.
    clock.advance(MINUTE);
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Nina <nina@customer.test>', to: SUPPORT, subject: 'Brand new', messageId: 'new@customer.test', date: clock.now() }),
        receivedAt: clock.now(),
        isNew: true,
      },
    ]);
    clock.advance(2 * MINUTE);
    await drain();
    const fresh = await s.app.db.selectFrom('messages').select('conversation_id').where('mail_message_id', '=', 'new@customer.test').executeTakeFirstOrThrow();
    const freshConversation = await s.app.db.selectFrom('conversations').selectAll().where('id', '=', fresh.conversation_id).executeTakeFirstOrThrow();
    assert.equal(freshConversation.imported, 0, 'new mail is not imported history');

    // Members close the imported conversations: no rating request.
    for (const c of imported) {
      if (c.status !== 'closed') assert.equal((await api('PATCH', `/v1/conversations/${c.id}`, { status: 'closed' })).status, 200);
    }
    await api('POST', `/v1/migrations/${id}/finish`, { force: true });
    clock.advance(DAY);
    await drain();

    assert.equal(replies.messages.length, 0, 'nothing was mailed');
    assert.deepEqual(await s.app.db.selectFrom('greetings_sent').selectAll().execute(), []);
    assert.deepEqual(await s.app.db.selectFrom('rating_requests').selectAll().execute(), []);
    const automatic = await s.app.db
      .selectFrom('messages')
      .select('id')
      .where('workspace_id', '=', seed.workspaceId)
      .where('direction', '=', 'out')
      .where('automatic', '=', 1)
      .execute();
    assert.deepEqual(automatic, []);

    // Reports: only the live conversation opened; the imported ones and their history left out.
    const from = new Date(now.getTime() - 40 * DAY).toISOString().slice(0, 10);
    const report = await api('GET', `/v1/reports?from=${from}&to=${clock.now().toISOString().slice(0, 10)}`);
    assert.equal(report.status, 200);
    assert.equal(report.body.totals.opened, 1);
    assert.equal(report.body.totals.replies, 0);
    assert.equal(report.body.totals.first_response.count, 0);
    assert.equal(report.body.totals.closed, 0, 'closing an imported conversation is no close of the period');
    assert.equal(report.body.totals.resolution.count, 0);
    const usage = await api('GET', '/v1/usage');
    const month = usage.body.months.at(-1);
    assert.equal(month.conversations.imported, 2);
    assert.equal(month.messages.imported, 3);
  });
});
