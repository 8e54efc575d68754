// Channels that read their mailbox with a Google or Microsoft sign-in (issue 38): `reading: {kind:
// "google"}` answers the provider's page to open, the callback stores the grant and the reader logs
// in with IMAP XOAUTH2 against a real Dovecot whose oauth2 passdb asks the loopback fake provider
// whether each token is live. New mail appears; a revoked sign-in makes the reader ask to sign in
// again (with the provider's words), tells the managers once (a notification about the channel: no
// reply failed; a reply that fails later tells nobody again), and a new sign-in makes it read again
// at once. A channel signs in with one provider: reading with Microsoft while sending with Google is
// refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, seedEmailChannel } from '../helpers/mail.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';
import { type OAuthFake, startOAuthFake } from '../helpers/oauth-fake.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const CLIENTS = { google: { id: 'reader-google.apps.test', secret: 'reader-google-secret' }, microsoft: { id: 'reader-ms-0001', secret: 'reader-ms-secret' } };
const GMAIL = 'support@gmail-reader.test';
const OUTLOOK = 'help@contoso-reader.test';
const INGRESS = 'reader-sign-in-ingress';

async function until<T>(what: string, read: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await read();
    if (v) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('mailbox reader with a Google or Microsoft sign-in', { skip: dovecotMissing }, () => {
  let fake: OAuthFake;
  let d: Dovecot;
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    fake = await startOAuthFake(CLIENTS);
    d = await startDovecot({ oauth2IntrospectionUrl: fake.introspectionUrl });
    sink = await startSmtpSink({ xoauth2: (user, token) => fake.accessTokenValid(user, token) });
    // The passwords are never used: these mailboxes take XOAUTH2 here.
    d.addUser(GMAIL, 'unused-gmail-password');
    d.addUser(OUTLOOK, 'unused-outlook-password');
    s = await startTestServer({
      env: {
        SVC_MIGRATION_ALLOW_PRIVATE: '1',
        SVC_INGRESS_SECRET: INGRESS,
        SVC_MAILBOX_READER_POLL_SECONDS: '2',
        SVC_MAILBOX_READER_RETRY_SECONDS: '600',
        SVC_GOOGLE_CLIENT_ID: CLIENTS.google.id,
        SVC_GOOGLE_CLIENT_SECRET: CLIENTS.google.secret,
        SVC_MICROSOFT_CLIENT_ID: CLIENTS.microsoft.id,
        SVC_MICROSOFT_CLIENT_SECRET: CLIENTS.microsoft.secret,
        SVC_OAUTH_ENDPOINT: fake.url,
        SVC_OAUTH_IMAP: `127.0.0.1:${d.port}`,
        SVC_OAUTH_SMTP: `127.0.0.1:${sink.port}`,
      },
    });
    seed = await seedWorkspace(s.app);
  });
  after(async () => {
    await s?.stop();
    await d?.stop();
    await sink?.close();
    await fake?.stop();
  });

  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const channelOf = async (id: string) => ((await api('GET', '/v1/channels')).body.data as any[]).find((c) => c.id === id);
  const messagesWith = (rfcId: string) => s.app.db.selectFrom('messages').select(['id', 'direction']).where('mail_message_id', '=', rfcId).execute();

  /** Follows the sign-in like a browser: the provider's page (the fake consents at once), then the callback. */
  async function signIn(url: string) {
    const atProvider = await fetch(url, { redirect: 'manual' });
    assert.equal(atProvider.status, 302);
    const callback = new URL(atProvider.headers.get('location')!);
    const res = await fetch(`${s.url}${callback.pathname}${callback.search}`, { redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.match(res.headers.get('location')!, /signed_in=/);
  }

  async function deliver(user: string, subject: string) {
    const id = newMessageId('customer.test');
    d.deliver(user, 'INBOX', [{ raw: await buildMail({ from: 'Ada <ada@customer.test>', to: user, subject, messageId: id, date: new Date() }), isNew: true }]);
    return id;
  }

  test('Google: reading kind google → sign-in → IMAP XOAUTH2 with IDLE; new mail becomes a conversation', async () => {
    const channel = (await seedEmailChannel(s.app, seed, { address: GMAIL })).id;
    const r = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'google' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.reading.kind, 'google');
    const url = new URL(r.body.sign_in.url);
    assert.equal(url.origin + url.pathname, `${fake.url}/google/authorize`);
    assert.equal(url.searchParams.get('login_hint'), GMAIL);
    // Before the sign-in the reader cannot log in, and says why.
    const waiting = await until('the reader to ask for a sign-in', async () => {
      const c = await channelOf(channel);
      return c.reader.state === 'needs_attention' && c;
    });
    assert.equal(waiting.reader.error.step, 'login');
    assert.match(waiting.reader.error.message, /not signed in yet/);
    // The sign-in makes the reader try again at once (its retry was 10 minutes away).
    await signIn(r.body.sign_in.url);
    const connected = await until('the reader to connect', async () => {
      const c = await channelOf(channel);
      return c.reader.state === 'idle' && c;
    });
    assert.equal(connected.reader.error, null);
    assert.equal(connected.signed_in.account, GMAIL);
    const id = await deliver(GMAIL, 'Invoice question');
    const [m] = await until('the new mail', async () => (await messagesWith(id)).length > 0 && messagesWith(id));
    assert.equal(m.direction, 'in');
    assert.ok(!JSON.stringify(await channelOf(channel)).match(/access_token|refresh_token|ya29/), 'no token in the answer');
  });

  test('a reader whose sign-in was revoked asks to sign in again with the provider’s words', async () => {
    const channel = (await seedEmailChannel(s.app, seed, { address: OUTLOOK })).id;
    const r = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.sign_in.url, /\/microsoft\/authorize/);
    await signIn(r.body.sign_in.url);
    await until('the reader to connect', async () => (await channelOf(channel)).reader.state === 'idle');
    fake.revokeUser(OUTLOOK);
    fake.expireAccessTokens();
    // Saving the settings again restarts the session: its token is refused, the renewal too.
    const stopped = await api('PATCH', `/v1/channels/${channel}`, { reading: null });
    assert.equal(stopped.status, 200);
    const again = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    assert.equal(again.status, 200);
    const failed = await until('the reader to fail', async () => {
      const c = await channelOf(channel);
      return c.reader.state === 'needs_attention' && c;
    });
    assert.equal(failed.reader.error.step, 'login');
    assert.match(failed.reader.error.message, /Microsoft no longer accepts the sign-in of this channel \(.+\)/);
    // Nothing failed to send, yet the managers are told: about the channel, leading to its inbox's settings.
    const owner = (path: string) => s.request('GET', path, { token: seed.ownerToken });
    const told = await until('the managers to be told', async () => {
      const list = (await owner('/v1/notifications')).body.data as any[];
      const mine = list.filter((n) => n.trigger === 'sign_in_required' && n.channel_id === channel);
      return mine.length > 0 && mine;
    });
    assert.equal(told.length, 1);
    assert.equal(told[0].conversation_id, null);
    assert.equal(told[0].inbox_id, seed.inboxId);
    assert.match(told[0].url, new RegExp(`/settings/inboxes/${seed.inboxId}$`));
    assert.equal(told[0].title, 'Sign in again: Support mail (Microsoft) cannot read its mailbox');
    assert.match(told[0].body, /invalid_grant/);
    const readerTold = await s.app.db
      .selectFrom('notifications')
      .selectAll()
      .where('trigger', '=', 'sign_in_required')
      .where('channel_id', '=', channel)
      .execute();
    assert.deepEqual(
      readerTold.map((n) => n.person_id),
      [seed.ownerId],
    );
    // The reader failing again (a new session) and a reply failing for the same revocation tell nobody again.
    await api('PATCH', `/v1/channels/${channel}`, { reading: null });
    await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    await until('the reader to fail again', async () => (await channelOf(channel)).reader.state === 'needs_attention');
    assert.equal((await api('PATCH', `/v1/channels/${channel}`, { smtp_auth: 'microsoft' })).status, 200);
    const mail = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(OUTLOOK)}`, {
      raw: rawMail({ To: OUTLOOK, From: 'Ada <ada@customer.test>', Subject: 'Through the ingress' }),
      token: INGRESS,
    });
    assert.equal(mail.status, 201, JSON.stringify(mail.body));
    const conversation = mail.body.data[0].conversation_id as string;
    const sent = await api('POST', `/v1/conversations/${conversation}/messages`, { body: 'Our answer' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const reply = await until('the reply to fail', async () => {
      const m = (await api('GET', `/v1/conversations/${conversation}/messages/${sent.body.id}`)).body;
      return m.status === 'failed' && m;
    });
    assert.match(reply.error, /Microsoft no longer accepts the sign-in of this channel/);
    await s.app.jobs.drain();
    const allTold = await s.app.db.selectFrom('notifications').select(['id']).where('trigger', '=', 'sign_in_required').execute();
    assert.equal(allTold.length, 1, 'one revocation, told once');
    // Choosing it again now starts a new sign-in, after which the reader reads again at once.
    const renewed = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    assert.equal(renewed.status, 200);
    assert.ok(renewed.body.sign_in?.url, 'a revoked sign-in asks for a new one');
    await signIn(renewed.body.sign_in.url);
    await until('the reader to connect again', async () => (await channelOf(channel)).reader.state === 'idle');
    const id = await deliver(OUTLOOK, 'After signing in again');
    await until('mail after the new sign-in', async () => (await messagesWith(id)).length > 0);
    // The new sign-in also sends the reply the revoked grant failed, over XOAUTH2 as the account.
    await until('the failed reply to go', async () => {
      const m = (await api('GET', `/v1/conversations/${conversation}/messages/${sent.body.id}`)).body;
      return m.status === 'sent' && m;
    });
    assert.equal(sink.auths.at(-1)!.user, OUTLOOK);
  });

  test('one sign-in per channel: reading with Microsoft while sending with Google is refused; nothing changes', async () => {
    const created = await api('POST', '/v1/channels', {
      kind: 'email',
      inbox_id: seed.inboxId,
      name: 'Both',
      address: 'both@gmail-reader.test',
      smtp_auth: 'google',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const r = await api('PATCH', `/v1/channels/${created.body.id}`, { reading: { kind: 'microsoft' } });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal((await channelOf(created.body.id)).reading, null);
    const both = await api('POST', '/v1/channels', {
      kind: 'email',
      inbox_id: seed.inboxId,
      name: 'Mixed',
      address: 'mixed@gmail-reader.test',
      smtp_auth: 'microsoft',
      reading: { kind: 'google' },
    });
    assert.equal(both.status, 400, JSON.stringify(both.body));
    // The same provider for both: one sign-in serves sending and reading.
    const same = await api('PATCH', `/v1/channels/${created.body.id}`, { reading: { kind: 'google' } });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    assert.ok(same.body.sign_in.url);
  });
});
