// The mail rules a migration shares with inbound mail, against a real Dovecot: newsletters and
// delivery reports are automatic in the dry run and the copy (their senders do not become contacts),
// a reply that names its thread only in References joins it, imported mail keeps its Message-ID in
// the API, and mail without a Message-ID that arrives both ways while syncing is stored once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { connectedImapMigration, expectState, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A multipart/report as mail servers write them (nodemailer's composer cannot). */
function reportMail(opts: { from: string; reportType: string; messageId: string; date: Date }): Buffer {
  return Buffer.from(
    [
      `From: ${opts.from}`,
      `To: ${SUPPORT}`,
      'Subject: Report',
      `Message-ID: <${opts.messageId}>`,
      `Date: ${opts.date.toUTCString()}`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/report; report-type=${opts.reportType}; boundary="B"`,
      '',
      '--B',
      'Content-Type: text/plain',
      '',
      'A report about a message.',
      '--B',
      `Content-Type: message/${opts.reportType}`,
      '',
      'Version: 1',
      '--B--',
      '',
    ].join('\r\n'),
  );
}

describe('migration mail rules: automatic mail, References-only replies, identity, stored once', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  const now = new Date();
  const clock = new ManualClock(now);
  const at = (ms: number) => new Date(clock.now().getTime() + ms);
  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const messageByRfcId = (rfcId: string) =>
    s.app.db.selectFrom('messages').selectAll().where('workspace_id', '=', seed.workspaceId).where('mail_message_id', '=', rfcId).executeTakeFirst();
  const copiesOf = async (text: string) =>
    (await s.app.db.selectFrom('messages').select('id').where('workspace_id', '=', seed.workspaceId).where('body', 'like', `%${text}%`).execute()).length;
  const poll = async () => {
    clock.advance(2 * MINUTE);
    await s.app.jobs.drain();
  };

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    s = await startTestServer({ clock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    const channel = await seedEmailChannel(s.app, seed, { address: SUPPORT });
    d.deliver(SUPPORT, 'INBOX', [
      // Newsletters and list mail, each marked only by its List-* headers.
      {
        raw: await buildMail({
          from: 'Vendor News <news@vendor.test>',
          to: SUPPORT,
          subject: 'November news',
          messageId: 'news-1@vendor.test',
          date: daysAgo(now, 5),
          headers: { 'List-Id': 'Vendor news <news.vendor.test>', 'List-Unsubscribe': '<https://vendor.test/u/1>' },
        }),
        flags: 'S',
      },
      {
        raw: await buildMail({
          from: 'Shop <promo@shop.test>',
          to: SUPPORT,
          subject: 'Sale',
          messageId: 'promo-1@shop.test',
          date: daysAgo(now, 4),
          headers: { 'List-Unsubscribe': '<https://shop.test/u/2>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        }),
      },
      {
        raw: await buildMail({
          from: 'Users list <users@lists.test>',
          to: SUPPORT,
          subject: '[users] Digest',
          messageId: 'digest-1@lists.test',
          date: daysAgo(now, 3),
          headers: { 'List-Id': '<users.lists.test>' },
        }),
        flags: 'S',
      },
      // A delivery report from an address that is not MAILER-DAEMON, and a report of another type.
      { raw: reportMail({ from: 'Bounces <bounces@mx.test>', reportType: 'delivery-status', messageId: 'dsn-1@mx.test', date: daysAgo(now, 3) }), flags: 'S' },
      {
        raw: reportMail({ from: 'Abuse desk <abuse@isp.test>', reportType: 'feedback-report', messageId: 'arf-1@isp.test', date: daysAgo(now, 3) }),
        flags: 'S',
      },
      // A thread whose last reply names it only in References (Outlook style, no In-Reply-To).
      {
        raw: await buildMail({
          from: 'Rita <rita@customer.test>',
          to: SUPPORT,
          cc: ['Sam <sam@customer.test>'],
          subject: 'Broken widget',
          messageId: 'r1@customer.test',
          date: daysAgo(now, 3),
          text: 'The widget is broken.',
        }),
        flags: 'S',
      },
      {
        raw: await buildMail({
          from: 'Rita <rita@customer.test>',
          to: SUPPORT,
          subject: 'AW: Broken widget (still)',
          messageId: 'r3@customer.test',
          references: ['r1@customer.test', 'r2@acme.test'],
          date: daysAgo(now, 1),
        }),
        flags: 'S',
      },
      {
        raw: await buildMail({
          from: 'Hank <hank@customer.test>',
          to: SUPPORT,
          subject: 'No id here',
          messageId: null,
          date: daysAgo(now, 2),
          text: 'Hank has no Message-ID.',
        }),
        flags: 'S',
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'rita@customer.test',
          subject: 'Re: Broken widget',
          messageId: 'r2@acme.test',
          inReplyTo: 'r1@customer.test',
          references: ['r1@customer.test'],
          date: daysAgo(now, 2),
        }),
        flags: 'S',
      },
    ]);
    id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d, { channelId: channel.id });
  });
  after(async () => {
    await s?.stop();
    await d?.stop();
  });

  test('the dry run skips threads of newsletters, list mail and delivery reports; a References-only reply is in its thread', async () => {
    assert.equal((await api('POST', `/v1/migrations/${id}/scan`)).status, 202);
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    const plan = ready.plan.summary;
    assert.equal(plan.total, 9);
    assert.deepEqual(plan.skipped, { automatic_only: 4 }, 'the three newsletters and the delivery report');
    assert.equal(plan.to_copy, 5, 'the report of another type, Rita’s thread of three and Hank');
    assert.equal(plan.conversations, 3);
    assert.equal(plan.contacts_to_create, 3, 'abuse@isp.test, rita and hank; no newsletter sender');

    const items = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['rfc_id', 'thread_key', 'status', 'skip_reason', 'automatic'])
      .where('migration_id', '=', id)
      .execute();
    const byId = new Map(items.map((i) => [i.rfc_id, i]));
    for (const rfc of ['news-1@vendor.test', 'promo-1@shop.test', 'digest-1@lists.test', 'dsn-1@mx.test']) {
      assert.equal(byId.get(rfc)?.automatic, 1, rfc);
      assert.equal(byId.get(rfc)?.skip_reason, 'automatic_only', rfc);
    }
    assert.equal(byId.get('arf-1@isp.test')?.automatic, 0, 'a report of another type is not automatic by itself');
    assert.equal(byId.get('r3@customer.test')?.thread_key, byId.get('r1@customer.test')?.thread_key, 'the reply joins by References alone');
    assert.equal(byId.get('r2@acme.test')?.thread_key, byId.get('r1@customer.test')?.thread_key);

    const preview = await api('GET', `/v1/migrations/${id}/preview`);
    const rita = preview.body.data.find((c: { contact: { email: string } }) => c.contact.email === 'rita@customer.test');
    assert.equal(rita.messages.length, 3);
  });

  test('the copy: no conversation or contact for automatic-only threads; the References-only reply joins; imported mail keeps its identity', async () => {
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'syncing');

    const contacts = await s.app.db.selectFrom('contact_emails').select('email').where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(contacts.map((c) => c.email).sort(), ['abuse@isp.test', 'hank@customer.test', 'rita@customer.test']);
    for (const rfc of ['news-1@vendor.test', 'promo-1@shop.test', 'digest-1@lists.test', 'dsn-1@mx.test'])
      assert.equal(await messageByRfcId(rfc), undefined, rfc);

    const r1 = (await messageByRfcId('r1@customer.test'))!;
    const r3 = (await messageByRfcId('r3@customer.test'))!;
    assert.equal(r3.conversation_id, r1.conversation_id, 'one conversation for the thread');
    const messages = (await api('GET', `/v1/conversations/${r1.conversation_id}/messages?order=asc`)).body.data.filter(
      (m: { kind: string }) => m.kind === 'message',
    );
    assert.deepEqual(
      messages.map((m: { email: { message_id: string } }) => m.email.message_id),
      ['r1@customer.test', 'r2@acme.test', 'r3@customer.test'],
    );
    assert.deepEqual(messages[0].email.from, { name: 'Rita', address: 'rita@customer.test' });
    assert.deepEqual(messages[0].email.to, [{ name: null, address: SUPPORT }]);
    assert.deepEqual(messages[0].email.cc, [{ name: 'Sam', address: 'sam@customer.test' }]);
    assert.deepEqual(messages[1].email.in_reply_to, ['r1@customer.test']);
    assert.deepEqual(messages[2].email.in_reply_to, []);
    assert.deepEqual(messages[2].email.references, ['r1@customer.test', 'r2@acme.test']);
    assert.equal(messages[2].email.subject, 'AW: Broken widget (still)');

    // Originals are not kept (the default); the email object still holds the original headers.
    const hank = await s.app.db
      .selectFrom('messages')
      .selectAll()
      .where('workspace_id', '=', seed.workspaceId)
      .where('body', 'like', '%Hank has no Message-ID%')
      .executeTakeFirstOrThrow();
    assert.equal(hank.raw_storage_key, null);
    const hankApi = (await api('GET', `/v1/conversations/${hank.conversation_id}/messages/${hank.id}`)).body;
    assert.equal(hankApi.email.message_id, null, 'no Message-ID is made up');
    assert.equal(hankApi.email.from.address, 'hank@customer.test');
  });

  test('while syncing, mail without a Message-ID that arrives both ways is stored once, in either order', async () => {
    const ingress = (raw: Buffer) => s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(SUPPORT)}`, { raw, token: INGRESS_SECRET });
    // The same message as the new route and the old mailbox each deliver it (their own trace headers).
    const copies = async (text: string, date: Date) => {
      const mail = (await buildMail({ from: 'Zoe <zoe@customer.test>', to: SUPPORT, subject: 'Both ways', messageId: null, date, text })).toString('latin1');
      return {
        byRoute: Buffer.from(`Received: from forwarder.acme.test by svc; ${date.toUTCString()}\r\nX-Forwarded-To: ${SUPPORT}\r\n${mail}`, 'latin1'),
        inOldMailbox: Buffer.from(`Return-Path: <zoe@customer.test>\r\nDelivered-To: ${SUPPORT}\r\n${mail}`, 'latin1'),
      };
    };

    const first = await copies('Route first, then the old mailbox.', at(10_000));
    const stored = await ingress(first.byRoute);
    assert.equal(stored.status, 201);
    assert.equal(stored.body.data[0].duplicate, false);
    d.deliver(SUPPORT, 'INBOX', [{ raw: first.inOldMailbox, receivedAt: at(20_000), isNew: true }]);
    await poll();
    assert.equal(await copiesOf('Route first, then the old mailbox.'), 1);
    let m = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.equal(m.sync.arrived_both_ways, 1);
    assert.equal(m.sync.new_mail_from_old_mailbox, 0);

    const second = await copies('The old mailbox first, then the route.', at(10_000));
    d.deliver(SUPPORT, 'INBOX', [{ raw: second.inOldMailbox, receivedAt: at(20_000), isNew: true }]);
    await poll();
    assert.equal(await copiesOf('The old mailbox first, then the route.'), 1);
    const late = await ingress(second.byRoute);
    assert.equal(late.status, 201);
    assert.equal(late.body.data[0].duplicate, true);
    assert.equal(await copiesOf('The old mailbox first, then the route.'), 1);
    m = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.equal(m.sync.new_mail_from_old_mailbox, 1);
    assert.equal(m.state, 'syncing');
  });
});
