// A copy batch writes the conversations it creates at its end, in a few multi-row inserts (issue 19).
// What a later message of the same batch must see of them still counts: the same mail in two
// folders is stored once (without a Message-ID, the plan cannot tell, only the copy's digest), and a
// later thread that names a message of the batch finds its conversation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseHeaderBlock, parseMail } from '../../src/mail/parse.js';
import { copyStep } from '../../src/mailbox-migration/copy/copy.js';
import { chooseFolders, finishScan, scanStep } from '../../src/mailbox-migration/copy/scan.js';
import { connectReadOnly, type ReadOnlyMailbox } from '../../src/mailbox-migration/sources/imap.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { buildMail } from '../helpers/mailbox.js';
import { connectedImapMigration, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('a copy batch and the conversations it creates', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let mailbox: ReadOnlyMailbox;
  const now = new Date();
  const clock = new ManualClock(now);
  const daysAgo = (n: number) => new Date(now.getTime() - n * 86_400_000);

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    const noId = await buildMail({ from: 'Hank <hank@customer.test>', to: SUPPORT, subject: 'No id, two folders', messageId: null, date: daysAgo(3) });
    d.deliver(SUPPORT, 'INBOX', [
      { raw: noId, flags: 'S' },
      {
        raw: await buildMail({ from: 'Ada <ada@customer.test>', to: SUPPORT, subject: 'Question', messageId: 'q1@customer.test', date: daysAgo(5) }),
        flags: 'S',
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      { raw: noId, flags: 'S' },
      {
        raw: await buildMail({
          from: `Support <${SUPPORT}>`,
          to: 'ada@customer.test',
          subject: 'Re: Question',
          messageId: 'a1@acme.test',
          inReplyTo: 'q1@customer.test',
          references: ['q1@customer.test'],
          date: daysAgo(4),
        }),
        flags: 'S',
      },
    ]);
    s = await startTestServer({ clock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1' } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { address: SUPPORT });
    id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d);
    mailbox = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: SUPPORT, password: SUPPORT_PASSWORD });
  });
  after(async () => {
    await mailbox?.logout();
    await s?.stop();
    await d?.stop();
  });

  const migration = () => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('the same mail without Message-ID in two folders is stored once; a thread keeps one conversation', async () => {
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    assert.equal(await scanStep(s.app, await migration(), mailbox, 60_000, parseHeaderBlock), 'done');
    await finishScan(s.app, await migration(), chooseFolders(await migration(), await mailbox.folders()));
    assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);
    const limits = { batchThreads: 100, batchMessages: 200, batchBytes: 8 * 1024 * 1024 };
    assert.equal(await copyStep(s.app, await migration(), mailbox, { parse: parseMail, limits }, 60_000), 'done');

    const items = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['folder', 'subject', 'status', 'skip_reason', 'message_id', 'conversation_id'])
      .where('migration_id', '=', id)
      .execute();
    const noId = items.filter((i) => i.subject === 'No id, two folders');
    assert.deepEqual(noId.map((i) => i.status).sort(), ['copied', 'duplicate']);
    assert.equal(noId[0].message_id, noId[1].message_id, 'the duplicate names the stored copy');
    assert.equal(noId[0].conversation_id, noId[1].conversation_id);

    const messages = await s.app.db
      .selectFrom('messages')
      .select(['id', 'conversation_id', 'kind', 'subject', 'direction', 'created_at'])
      .where('workspace_id', '=', seed.workspaceId)
      .execute();
    const mails = messages.filter((m) => m.kind === 'message');
    assert.equal(mails.length, 3);
    const thread = items.filter((i) => i.subject === 'Question' || i.subject === 'Re: Question');
    assert.equal(new Set(thread.map((i) => i.conversation_id)).size, 1, 'question and answer in one conversation');
    const conversations = await s.app.db.selectFrom('conversations').selectAll().where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(conversations.length, 2);
    for (const c of conversations) {
      const own = messages.filter((m) => m.conversation_id === c.id);
      const newest = own.filter((m) => m.kind === 'message').sort((a, b) => (a.created_at < b.created_at ? 1 : -1))[0];
      const divider = own.find((m) => m.kind === 'event');
      assert.ok(divider, 'the divider after the imported history');
      assert.equal(divider.created_at, new Date(new Date(newest.created_at).getTime() + 1).toISOString());
      assert.equal(c.last_message_at, newest.created_at);
      assert.equal(c.updated_at, now.toISOString(), 'retention counts from the day of the import');
      assert.equal(c.imported, 1);
    }
    // The answered question waits for the customer; the unanswered mail is open.
    assert.equal(conversations.find((c) => c.id === thread[0].conversation_id)?.status, 'pending');
    assert.equal(conversations.find((c) => c.id === noId[0].conversation_id)?.status, 'open');
    // Stored once, findable as such: the stored-mail records point at the messages written.
    const digests = await s.app.db.selectFrom('mail_digests').select(['message_id']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(digests.map((r) => r.message_id).sort(), mails.map((m) => m.id).sort());
    const ids = await s.app.db.selectFrom('mail_ids').select(['rfc_id', 'conversation_id']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(ids.map((r) => r.rfc_id).sort(), ['a1@acme.test', 'q1@customer.test']);
  });
});
