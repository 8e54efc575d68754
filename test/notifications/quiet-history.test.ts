// The spec's quiet history: a migration imports mail (the copy, and history read while syncing)
// with every notification channel switched on for every member, and nobody is told anything. New
// mail read while syncing is live mail and does notify (so this test can tell the two apart).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HOUR, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { generateVapidKeys } from '../../src/push/commands.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { connectedImapMigration, expectState, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { fakeBrowser, type PushService, startPushService } from '../helpers/push-service.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const VAPID = generateVapidKeys();

describe('imported mail notifies nobody', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let sink: SmtpSink;
  let push: PushService;
  let seed: Seed;
  let id: string;
  const people: { personId: string; email: string; token: string }[] = [];
  const now = new Date();
  const clock = new ManualClock(now);
  const at = (ms: number) => new Date(clock.now().getTime() + ms);
  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const memberMail = () => sink.messages.filter((m) => people.some((p) => m.to.includes(p.email)));

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    sink = await startSmtpSink();
    s = await startTestServer({
      clock,
      env: {
        SVC_MIGRATION_ALLOW_PRIVATE: '1',
        SVC_WEBHOOK_ALLOW_PRIVATE: '1',
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_VAPID_PUBLIC_KEY: VAPID.publicKey,
        SVC_VAPID_PRIVATE_KEY: VAPID.privateKey,
        SVC_VAPID_SUBJECT: 'mailto:ops@quiet.example',
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(sink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@quiet.example',
      },
    });
    await s.app.jobs.stop();
    push = await startPushService(VAPID.publicKey, () => Math.floor(clock.now().getTime() / 1000));
    seed = await seedWorkspace(s.app);
    const ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    people.push({ personId: seed.ownerId, email: ownerEmail, token: seed.ownerToken }, await addPerson(s.app, seed.workspaceId, 'agent'));
    const everything = { realtime: true, push: true, email: true };
    for (const [i, p] of people.entries()) {
      const r = await s.request('PATCH', '/v1/me/notification-preferences', {
        token: p.token,
        body: { new_conversation: everything, assigned: everything, customer_reply: everything, mention: everything },
      });
      assert.equal(r.status, 200);
      const browser = fakeBrowser();
      push.browsers.set(`/push/${i}`, browser);
      const t = clock.now().toISOString();
      await s.app.db
        .insertInto('push_subscriptions')
        .values({
          id: `push_quiet_${i}`,
          person_id: p.personId,
          endpoint: `${push.url}/push/${i}`,
          key_p256dh: browser.p256dh,
          key_auth: browser.auth,
          expires_at: null,
          user_agent: null,
          created_at: t,
          updated_at: t,
        })
        .execute();
    }
    // History: a thread the customer wrote last (open), one the team answered, one long ago.
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Tina <tina@customer.test>', to: SUPPORT, subject: 'T1', messageId: 't1@customer.test', date: daysAgo(now, 3) }),
        receivedAt: daysAgo(now, 3),
        isNew: true,
      },
      {
        raw: await buildMail({ from: 'Tom <tom@customer.test>', to: SUPPORT, subject: 'T2', messageId: 't2@customer.test', date: daysAgo(now, 2) }),
        flags: 'S',
        receivedAt: daysAgo(now, 2),
      },
      {
        raw: await buildMail({ from: 'Olga <olga@customer.test>', to: SUPPORT, subject: 'Old one', messageId: 'old@customer.test', date: daysAgo(now, 40) }),
        flags: 'S',
        receivedAt: daysAgo(now, 40),
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'tom@customer.test',
          subject: 'Re: T2',
          messageId: 't2-answer@acme.test',
          inReplyTo: 't2@customer.test',
          references: ['t2@customer.test'],
          date: daysAgo(now, 1),
        }),
        flags: 'S',
        receivedAt: daysAgo(now, 1),
      },
    ]);
    // Nobody has had a panel open: e-mail would be sent for anything that notifies.
    clock.advance(10 * MINUTE);
  });
  after(async () => {
    await s?.stop();
    await sink?.close();
    await push?.close();
    await d?.stop();
  });

  test('the copy and history read while syncing: no notification, push or e-mail; new mail afterwards notifies', async () => {
    const channel = await seedEmailChannel(s.app, seed, { address: SUPPORT });
    id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d, { channelId: channel.id });
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'syncing');
    const imported = await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).where('imported', '=', 1).execute();
    assert.equal(imported.length, 3, 'the history was imported');

    // History read while syncing: received before the copy ended, and the team's answer to it.
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Lars <lars@customer.test>', to: SUPPORT, subject: 'Late history', messageId: 'late@customer.test', date: at(-HOUR) }),
        receivedAt: at(-HOUR),
        isNew: true,
      },
    ]);
    d.deliver(SUPPORT, 'Sent', [
      {
        raw: await buildMail({
          from: `Acme <${SUPPORT}>`,
          to: 'lars@customer.test',
          subject: 'Re: Late history',
          messageId: 'late-answer@acme.test',
          inReplyTo: 'late@customer.test',
          references: ['late@customer.test'],
          date: at(MINUTE),
        }),
        flags: 'S',
        receivedAt: at(MINUTE),
      },
    ]);
    clock.advance(2 * MINUTE);
    await s.app.jobs.drain();
    assert.ok(
      await s.app.db
        .selectFrom('messages')
        .select('id')
        .where('mail_message_id', '=', 'late@customer.test')
        .where('imported_at', 'is not', null)
        .executeTakeFirst(),
      'history read while syncing is imported',
    );
    clock.advance(10 * MINUTE);
    await s.app.jobs.drain();

    assert.equal((await s.app.db.selectFrom('notifications').select('id').where('workspace_id', '=', seed.workspaceId).execute()).length, 0, 'no notification');
    assert.equal((await s.app.db.selectFrom('events').select('id').where('type', '=', 'notification').execute()).length, 0, 'nothing on the panels');
    assert.equal(push.received.length, 0, 'no push');
    assert.equal(memberMail().length, 0, 'no e-mail');
    assert.deepEqual(push.problems, []);

    // New mail read while syncing (received after the copy ended) is live mail: it notifies.
    d.deliver(SUPPORT, 'INBOX', [
      {
        raw: await buildMail({ from: 'Nina <nina@customer.test>', to: SUPPORT, subject: 'Brand new', messageId: 'new@customer.test', date: at(20_000) }),
        receivedAt: at(20_000),
        isNew: true,
      },
    ]);
    clock.advance(2 * MINUTE);
    await s.app.jobs.drain();
    const told = await s.app.db.selectFrom('notifications').select(['person_id', 'trigger']).where('workspace_id', '=', seed.workspaceId).execute();
    assert.deepEqual(
      told.map((n) => n.trigger),
      ['new_conversation', 'new_conversation'],
    );
    assert.equal(push.received.length, 2);
    assert.match(String(push.received[0].payload.title), /Brand new/);
    await sink.waitFor(2);
    assert.equal(memberMail().length, 2);
  });
});
