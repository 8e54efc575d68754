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
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { rawMail, seedEmailChannel, shownChannel } from '../helpers/mail.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, signIn, startSignInScene } from '../helpers/sign-in.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const CLIENTS = { google: { id: 'reader-google.apps.test', secret: 'reader-google-secret' }, microsoft: { id: 'reader-ms-0001', secret: 'reader-ms-secret' } };
const GMAIL = 'support@gmail-reader.test';
const OUTLOOK = 'help@contoso-reader.test';
const INGRESS = 'reader-sign-in-ingress';

describe('mailbox reader with a Google or Microsoft sign-in', { skip: dovecotMissing }, () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let d: Dovecot;
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    scene = await startSignInScene({
      clients: CLIENTS,
      dovecot: { users: [GMAIL, OUTLOOK] },
      smtpSink: true,
      env: { SVC_INGRESS_SECRET: INGRESS, SVC_MAILBOX_READER_POLL_SECONDS: '2', SVC_MAILBOX_READER_RETRY_SECONDS: '600' },
    });
    ({ fake, d, sink, s, seed } = scene);
  });
  after(() => scene?.stop());

  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });
  const channelOf = (id: string) => shownChannel(s, seed.apiKey, id);
  /** Waits until the channel's reader is in `state`; returns the channel as the API shows it. */
  const readerIn = (channel: string, state: string, what: string) =>
    waitUntil(
      async () => {
        const c = await channelOf(channel);
        return c.reader.state === state && c;
      },
      15_000,
      what,
    );
  const messagesWith = (rfcId: string) => s.app.db.selectFrom('messages').select(['id', 'direction']).where('mail_message_id', '=', rfcId).execute();

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
    const waiting = await readerIn(channel, 'needs_attention', 'the reader to ask for a sign-in');
    assert.equal(waiting.reader.error.step, 'login');
    assert.match(waiting.reader.error.message, /not signed in yet/);
    // The sign-in makes the reader try again at once (its retry was 10 minutes away).
    await signIn(s, r.body.sign_in.url);
    const connected = await readerIn(channel, 'idle', 'the reader to connect');
    assert.equal(connected.reader.error, null);
    assert.equal(connected.signed_in.account, GMAIL);
    const id = await deliver(GMAIL, 'Invoice question');
    const [m] = await waitUntil(async () => (await messagesWith(id)).length > 0 && messagesWith(id), 15_000, 'the new mail');
    assert.equal(m.direction, 'in');
    assert.ok(!JSON.stringify(await channelOf(channel)).match(/access_token|refresh_token|ya29/), 'no token in the answer');
  });

  test('a reader whose sign-in was revoked asks to sign in again with the provider’s words', async () => {
    const channel = (await seedEmailChannel(s.app, seed, { address: OUTLOOK })).id;
    const r = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.sign_in.url, /\/microsoft\/authorize/);
    await signIn(s, r.body.sign_in.url);
    await readerIn(channel, 'idle', 'the reader to connect');
    fake.revokeUser(OUTLOOK);
    fake.expireAccessTokens();
    // Saving the settings again restarts the session: its token is refused, the renewal too.
    const stopped = await api('PATCH', `/v1/channels/${channel}`, { reading: null });
    assert.equal(stopped.status, 200);
    const again = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    assert.equal(again.status, 200);
    const failed = await readerIn(channel, 'needs_attention', 'the reader to fail');
    assert.equal(failed.reader.error.step, 'login');
    assert.match(failed.reader.error.message, /Microsoft no longer accepts the sign-in of this channel \(.+\)/);
    // Nothing failed to send, yet the managers are told: about the channel, leading to its inbox's settings.
    const owner = (path: string) => s.request('GET', path, { token: seed.ownerToken });
    const told = await waitUntil(
      async () => {
        const list = (await owner('/v1/notifications')).body.data as any[];
        const mine = list.filter((n) => n.trigger === 'sign_in_required' && n.channel_id === channel);
        return mine.length > 0 && mine;
      },
      15_000,
      'the managers to be told',
    );
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
    await readerIn(channel, 'needs_attention', 'the reader to fail again');
    assert.equal((await api('PATCH', `/v1/channels/${channel}`, { smtp_auth: 'microsoft' })).status, 200);
    const mail = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(OUTLOOK)}`, {
      raw: rawMail({ To: OUTLOOK, From: 'Ada <ada@customer.test>', Subject: 'Through the ingress' }),
      token: INGRESS,
    });
    assert.equal(mail.status, 201, JSON.stringify(mail.body));
    const conversation = mail.body.data[0].conversation_id as string;
    const sent = await api('POST', `/v1/conversations/${conversation}/messages`, { body: 'Our answer' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const reply = await waitUntil(
      async () => {
        const m = (await api('GET', `/v1/conversations/${conversation}/messages/${sent.body.id}`)).body;
        return m.status === 'failed' && m;
      },
      15_000,
      'the reply to fail',
    );
    assert.match(reply.error, /Microsoft no longer accepts the sign-in of this channel/);
    await s.app.jobs.drain();
    const allTold = await s.app.db.selectFrom('notifications').select(['id']).where('trigger', '=', 'sign_in_required').execute();
    assert.equal(allTold.length, 1, 'one revocation, told once');
    // Choosing it again now starts a new sign-in, after which the reader reads again at once.
    const renewed = await api('PATCH', `/v1/channels/${channel}`, { reading: { kind: 'microsoft' } });
    assert.equal(renewed.status, 200);
    assert.ok(renewed.body.sign_in?.url, 'a revoked sign-in asks for a new one');
    await signIn(s, renewed.body.sign_in.url);
    await readerIn(channel, 'idle', 'the reader to connect again');
    const id = await deliver(OUTLOOK, 'After signing in again');
    await waitUntil(async () => (await messagesWith(id)).length > 0, 15_000, 'mail after the new sign-in');
    // The new sign-in also sends the reply the revoked grant failed, over XOAUTH2 as the account.
    await waitUntil(
      async () => {
        const m = (await api('GET', `/v1/conversations/${conversation}/messages/${sent.body.id}`)).body;
        return m.status === 'sent' && m;
      },
      15_000,
      'the failed reply to go',
    );
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
