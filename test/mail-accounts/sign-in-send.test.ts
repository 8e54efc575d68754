// E-mail channels that send with a Google or Microsoft sign-in (issue 38, "Sending with a
// sign-in"): smtp_auth google / microsoft answers the provider's page (authorization code with
// PKCE), the callback stores the grant sealed, and replies go over SMTP AUTH XOAUTH2 to a sink that
// takes only the live token of the signed-in account (the loopback OAuth fake says which are live).
// The access token is renewed before it expires; a revoked grant fails the replies at once with the
// provider's words, shows "sign in again" on the channel, tells the managers once, and a new sign-in
// sends the failed replies again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { channelAccessToken } from '../../src/mail-accounts/grants.js';
import { GOOGLE_SCOPE } from '../../src/mailbox-migration/sources/sign-in.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import type { Seed } from '../helpers/fixtures.js';
import { rawMail, shownChannel } from '../helpers/mail.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, signIn, startSignInScene } from '../helpers/sign-in.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

const CLIENTS = { google: { id: 'google-client.apps.test', secret: 'google-secret-xyz' }, microsoft: { id: 'ms-client-0001', secret: 'ms-secret-xyz' } };
const SECRET = 'sign-in-send-ingress';
const GMAIL = 'support@gmail-team.test';
const OUTLOOK = 'help@contoso-send.test';

describe('e-mail channels that send with a Google or Microsoft sign-in', () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  const clock = new ManualClock(new Date());
  let googleChannel: string;

  before(async () => {
    scene = await startSignInScene({ clients: CLIENTS, smtpSink: true, clock, env: { SVC_INGRESS_SECRET: SECRET }, stopJobs: true });
    ({ fake, sink, s, seed } = scene);
  });
  after(() => scene?.stop());

  const api = (method: string, path: string, body?: unknown) => s.request(method, path, { token: seed.apiKey, body });

  async function customerMail(to: string, headers: Record<string, string>) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(to)}`, {
      raw: rawMail({ To: to, From: 'Customer <c@cust.example>', ...headers }),
      token: SECRET,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  async function reply(conversationId: string, body: string) {
    const r = await api('POST', `/v1/conversations/${conversationId}/messages`, { body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  }

  const message = async (conversationId: string, id: string) => (await api('GET', `/v1/conversations/${conversationId}/messages/${id}`)).body;
  const channel = (id: string) => shownChannel(s, seed.apiKey, id);

  test('bad input is refused with 4xx and changes nothing', async () => {
    const count = (await api('GET', '/v1/channels')).body.data.length;
    const base = { kind: 'email', inbox_id: seed.inboxId, name: 'Mail', address: 'x@bad-input.test' };
    for (const body of [
      { ...base, smtp_auth: 'yahoo' },
      { ...base, smtp_auth: 'google', smtp_host: 'smtp.example.com' },
      { ...base, smtp_auth: 'microsoft', smtp_password: 'pw' },
    ]) {
      const r = await api('POST', '/v1/channels', body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.ok(r.body.error.code && r.body.error.message);
    }
    assert.equal((await api('GET', '/v1/channels')).body.data.length, count);
    const gone = await fetch(`${s.url}/v1/migration-sign-in/callback?state=${'x'.repeat(40)}&code=abc`, { redirect: 'manual' });
    assert.equal(gone.status, 400);
  });

  test('Google: create with smtp_auth google → sign-in → reply over XOAUTH2 → the answer threads', async () => {
    const created = await api('POST', '/v1/channels', { kind: 'email', inbox_id: seed.inboxId, name: 'Gmail', address: GMAIL, smtp_auth: 'google' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    googleChannel = created.body.id;
    assert.equal(created.body.smtp_auth, 'google');
    assert.equal(created.body.sign_in_required, true);
    assert.equal(created.body.signed_in, null);
    assert.deepEqual(
      { host: created.body.smtp.host, port: created.body.smtp.port, tls: created.body.smtp.tls, password_set: created.body.smtp.password_set },
      { host: 'smtp.gmail.com', port: 587, tls: 'starttls', password_set: false },
    );
    const url = new URL(created.body.sign_in.url);
    assert.equal(url.origin + url.pathname, `${fake.url}/google/authorize`);
    assert.equal(url.searchParams.get('scope'), GOOGLE_SCOPE);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(url.searchParams.get('login_hint'), GMAIL);

    const back = await signIn(s, created.body.sign_in.url);
    assert.equal(back, `${s.app.config.publicUrl}/settings/inboxes/${seed.inboxId}?channel=${googleChannel}&signed_in=google`);
    const shown = await channel(googleChannel);
    assert.equal(shown.sign_in_required, false);
    assert.equal(shown.signed_in.account, GMAIL);
    assert.equal(shown.signed_in.state, 'ok');
    assert.equal(shown.smtp.username, GMAIL);

    const first = await customerMail(GMAIL, { Subject: 'Order 77', 'Message-ID': '<c77@cust.example>' });
    const replyId = await reply(first.conversation_id, 'Your order ships today.');
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.from, GMAIL);
    assert.equal(mail.parsed.inReplyTo, '<c77@cust.example>');
    const auth = sink.auths.at(-1)!;
    assert.deepEqual({ method: auth.method, user: auth.user, ok: auth.ok }, { method: 'XOAUTH2', user: GMAIL, ok: true });
    assert.ok(fake.accessTokenValid(GMAIL, auth.token!), 'the current token of the grant');
    assert.equal((await message(first.conversation_id, replyId)).status, 'sent');

    const answer = await customerMail(GMAIL, { Subject: 'Re: Order 77', 'Message-ID': '<c78@cust.example>', 'In-Reply-To': mail.parsed.messageId! });
    assert.equal(answer.conversation_id, first.conversation_id, 'the customer’s answer joins the conversation');

    // No token anywhere it could be read.
    const grant = await s.app.db.selectFrom('channel_grants').selectAll().where('channel_id', '=', googleChannel).executeTakeFirstOrThrow();
    const tokens = JSON.parse(s.app.sealer.open(grant.grant_sealed)) as { refresh_token: string; access_token: string };
    assert.ok(!grant.grant_sealed.includes(tokens.refresh_token));
    const events = (await s.app.db.selectFrom('events').select('data').execute()).map((e) => e.data).join('');
    for (const text of [JSON.stringify((await api('GET', '/v1/channels')).body), JSON.stringify(created.body), s.rawLogs.join(''), events]) {
      assert.ok(!text.includes(tokens.refresh_token) && !text.includes(tokens.access_token));
    }
  });

  test('the access token is renewed before it expires (and when the server refuses it)', async () => {
    const refreshes = () => fake.tokenRequests.filter((r) => r.grant_type === 'refresh_token' && r.ok).length;
    const before = refreshes();
    const held = await channelAccessToken(s.app, googleChannel);
    assert.equal(refreshes(), before, 'a token valid for more than 5 minutes is used as it is');
    clock.advance(56 * MINUTE); // the fake's tokens last 3599 s: now within the 5-minute margin
    const conversation = (await customerMail(GMAIL, { Subject: 'Refresh', 'Message-ID': '<r1@cust.example>' })).conversation_id;
    await reply(conversation, 'Renewed token.');
    const count = sink.messages.length;
    await s.app.jobs.drain();
    await sink.waitFor(count + 1);
    assert.equal(refreshes(), before + 1);
    const used = sink.auths.at(-1)!;
    assert.notEqual(used.token, held.accessToken);
    assert.ok(fake.accessTokenValid(GMAIL, used.token!));
    // A token the server no longer takes (expired early): nodemailer asks again with renew, and the mail goes.
    fake.expireAccessTokens();
    await reply(conversation, 'After the server refused the token.');
    await s.app.jobs.drain();
    await sink.waitFor(count + 2);
    assert.equal(refreshes(), before + 2);
    assert.equal(sink.auths.at(-2)!.ok, false);
    assert.equal(sink.auths.at(-1)!.ok, true);
  });

  test('revoked: replies fail with Google’s words, "sign in again", managers told once; a new sign-in sends them', async () => {
    fake.revokeUser(GMAIL);
    fake.expireAccessTokens();
    clock.advance(60 * MINUTE);
    const a = await customerMail(GMAIL, { Subject: 'Revoked A', 'Message-ID': '<ra@cust.example>' });
    const b = await customerMail(GMAIL, { Subject: 'Revoked B', 'Message-ID': '<rb@cust.example>' });
    const ra = await reply(a.conversation_id, 'Reply A');
    const rb = await reply(b.conversation_id, 'Reply B');
    const count = sink.messages.length;
    await s.app.jobs.drain();
    for (const [c, id] of [
      [a.conversation_id, ra],
      [b.conversation_id, rb],
    ]) {
      const m = await message(c, id);
      assert.equal(m.status, 'failed', 'failed at once: retrying cannot help until someone signs in');
      assert.match(m.error, /Token has been expired or revoked\./);
    }
    assert.equal(sink.messages.length, count);
    const shown = await channel(googleChannel);
    assert.equal(shown.sign_in_required, true);
    assert.equal(shown.signed_in.state, 'revoked');
    assert.match(shown.signed_in.error, /invalid_grant: Token has been expired or revoked\./);
    const told = await s.app.db.selectFrom('notifications').selectAll().where('trigger', '=', 'sign_in_required').execute();
    assert.equal(told.length, 1, 'one notification for the one manager, once');
    assert.equal(told[0].person_id, seed.ownerId);
    assert.match(told[0].title, /^Sign in again: Gmail \(Google\)/);
    assert.match(told[0].body, /Token has been expired or revoked/);

    // Sign in again: PATCH smtp_auth google starts a new sign-in; the failed replies go.
    const again = await api('PATCH', `/v1/channels/${googleChannel}`, { smtp_auth: 'google' });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.ok(again.body.sign_in.url);
    await signIn(s, again.body.sign_in.url);
    assert.equal((await channel(googleChannel)).sign_in_required, false);
    await s.app.jobs.drain();
    await sink.waitFor(count + 2);
    assert.equal((await message(a.conversation_id, ra)).status, 'sent');
    assert.equal((await message(b.conversation_id, rb)).status, 'sent');
    assert.equal((await s.app.db.selectFrom('notifications').selectAll().where('trigger', '=', 'sign_in_required').execute()).length, 1);
  });

  test('Microsoft: a password channel switched to smtp_auth microsoft signs in with SMTP.Send and sends', async () => {
    const created = await api('POST', '/v1/channels', {
      kind: 'email',
      inbox_id: seed.inboxId,
      name: 'Outlook',
      address: OUTLOOK,
      smtp_host: 'smtp.contoso-send.test',
      smtp_username: 'old',
      smtp_password: 'old-password',
    });
    assert.equal(created.status, 201);
    const refused = await api('PATCH', `/v1/channels/${created.body.id}`, { smtp_auth: 'microsoft', smtp_port: 25 });
    assert.equal(refused.status, 400);
    const switched = await api('PATCH', `/v1/channels/${created.body.id}`, { smtp_auth: 'microsoft' });
    assert.equal(switched.status, 200, JSON.stringify(switched.body));
    assert.equal(switched.body.smtp.host, 'smtp.office365.com');
    assert.equal(switched.body.smtp.password_set, false, 'the old password is deleted');
    const url = new URL(switched.body.sign_in.url);
    assert.equal(url.origin + url.pathname, `${fake.url}/microsoft/authorize`);
    assert.match(url.searchParams.get('scope')!, /SMTP\.Send/);
    assert.match(url.searchParams.get('scope')!, /IMAP\.AccessAsUser\.All/);
    await signIn(s, switched.body.sign_in.url);
    const conversation = (await customerMail(OUTLOOK, { Subject: 'Outlook', 'Message-ID': '<o1@cust.example>' })).conversation_id;
    const id = await reply(conversation, 'From Microsoft 365.');
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.from, OUTLOOK);
    assert.equal(sink.auths.at(-1)!.user, OUTLOOK);
    assert.equal((await message(conversation, id)).status, 'sent');
    // Back to a password: the provider's server goes, the sign-in is no longer asked for.
    const back = await api('PATCH', `/v1/channels/${created.body.id}`, { smtp_auth: 'password' });
    assert.equal(back.status, 200);
    assert.equal(back.body.smtp, null);
    assert.equal(back.body.sign_in_required, false);
  });
});
