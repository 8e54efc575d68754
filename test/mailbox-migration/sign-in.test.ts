// Google and Microsoft mailboxes connect with a sign-in: PUT …/credentials answers the provider's
// page (authorization code with PKCE S256 and a single-use state), the callback stores the grant
// sealed, and IMAP logs in with XOAUTH2 — against a real Dovecot whose oauth2 passdb asks the
// loopback fake provider (test/helpers/oauth-fake.ts) whether each access token is live. From draft
// to completed for each provider; access tokens refreshed before they expire; a revoked grant
// (Google's and Microsoft's error shapes) waits in needs_attention for a new sign-in, which
// continues where the copy stopped; only allowed IMAP commands reach the server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MigrationPart } from '../../src/mailbox-migration/background.js';
import { ALLOWED_COMMANDS } from '../../src/mailbox-migration/sources/imap.js';
import { GOOGLE_SCOPE, MICROSOFT_SCOPE } from '../../src/mailbox-migration/sources/sign-in.js';
import { HOUR, ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { expectState, fillBulkMailbox } from '../helpers/migration.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { followSignIn, type SignInScene, signIn, startSignInScene } from '../helpers/sign-in.js';

const CLIENTS = { google: { id: 'google-client.apps.test', secret: 'google-secret-xyz' }, microsoft: { id: 'ms-client-0001', secret: 'ms-secret-xyz' } };
const GMAIL_USER = 'support@gmail-workspace.test';
const OUTLOOK_USER = 'help@contoso.test';
const THREADS = 6;
const LINK_USER = 'owner@gmail-workspace.test';

describe('sign-in providers: Google and Microsoft over XOAUTH2', { skip: dovecotMissing }, () => {
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
        users: [GMAIL_USER, OUTLOOK_USER, LINK_USER],
        prepare: async (dovecot) => {
          for (const user of [GMAIL_USER, OUTLOOK_USER]) await fillBulkMailbox(dovecot, user, { threads: THREADS, perThread: 2, now });
        },
      },
      clock,
      env: { SVC_MICROSOFT_TENANT: 'contoso.test' },
      stopJobs: true,
    });
    ({ fake, d, s, seed } = scene);
  });
  after(() => scene?.stop());

  const api = (method: string, path: string, body?: unknown, token = seed.apiKey) => s.request(method, path, { token, body });
  const worker = () => (s.server.parts['mailbox-migration'] as MigrationPart).worker;

  async function draft(provider: 'google' | 'microsoft', address: string) {
    await seedEmailChannel(s.app, seed, { address });
    const created = await api('POST', '/v1/migrations', { provider, source_address: address, inbox_id: seed.inboxId });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.id as string;
  }

  const copiedSubjects = async (id: string) =>
    (
      await s.app.db
        .selectFrom('conversations')
        .innerJoin('mailbox_migration_items', 'mailbox_migration_items.conversation_id', 'conversations.id')
        .select('conversations.subject')
        .where('mailbox_migration_items.migration_id', '=', id)
        .distinct()
        .execute()
    ).length;

  test('presets say the providers are configured and what the operator sets', async () => {
    const presets = (await api('GET', '/v1/migrations/presets')).body.data as { id: string; configured: boolean; operator_settings: string[] }[];
    const google = presets.find((p) => p.id === 'google')!;
    const microsoft = presets.find((p) => p.id === 'microsoft')!;
    assert.equal(google.configured, true);
    assert.deepEqual(google.operator_settings, ['SVC_GOOGLE_CLIENT_ID', 'SVC_GOOGLE_CLIENT_SECRET']);
    assert.equal(microsoft.configured, true);
    assert.ok(microsoft.operator_settings.includes('SVC_MICROSOFT_TENANT'));
  });

  test('Google: draft → sign-in → test → scan → copy → completed, read-only', async () => {
    const before = d.snapshot(GMAIL_USER);
    const id = await draft('google', GMAIL_USER);
    const refused = await api('PUT', `/v1/migrations/${id}/credentials`, { password: 'a password' });
    assert.equal(refused.status, 400, 'a sign-in provider takes no password');
    const started = await api('PUT', `/v1/migrations/${id}/credentials`, {});
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.equal(started.body.credentials.set, false);
    const url = new URL(started.body.sign_in.url);
    assert.equal(url.origin + url.pathname, `${fake.url}/google/authorize`);
    const q = url.searchParams;
    assert.equal(q.get('client_id'), CLIENTS.google.id);
    assert.equal(q.get('scope'), GOOGLE_SCOPE);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok((q.get('state') ?? '').length >= 40);
    assert.equal(q.get('access_type'), 'offline');
    assert.equal(q.get('login_hint'), GMAIL_USER);
    assert.equal(q.get('redirect_uri'), `${s.app.config.publicUrl}/v1/migration-sign-in/callback`);

    const { res, callbackPath, location } = await followSignIn(s, started.body.sign_in.url);
    assert.equal(res.status, 303);
    assert.equal(location, `${s.app.config.publicUrl}/settings/migrations/${id}?signed_in=google`);
    const again = await fetch(`${s.url}${callbackPath}`, { redirect: 'manual' });
    assert.equal(again.status, 400, 'the state is single use');
    assert.equal((await again.json()).error.code, 'sign_in_expired');

    const signedIn = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.equal(signedIn.credentials.set, true);
    assert.equal(signedIn.username, GMAIL_USER);
    const tested = await api('POST', `/v1/migrations/${id}/test`);
    assert.equal(tested.body.ok, true, JSON.stringify(tested.body));
    assert.equal(tested.body.migration.state, 'connected');
    assert.ok(fake.introspections > 0, 'Dovecot judged the access token with the provider');

    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    assert.equal((await api('POST', `/v1/migrations/${id}/start`)).status, 202);
    await s.app.jobs.drain();
    const syncing = await expectState(s, seed.apiKey, id, 'syncing');
    assert.equal(syncing.progress.copied, THREADS * 2);
    assert.equal(await copiedSubjects(id), THREADS);
    const done = await api('POST', `/v1/migrations/${id}/finish`, { force: true });
    assert.equal(done.body.state, 'completed', JSON.stringify(done.body));
    assert.equal(done.body.credentials.set, false, 'the grant is deleted when the migration ends');
    assert.match(done.body.app_password.message, /sign-in was deleted/);
    const row = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.password_sealed, null);

    assert.deepEqual([...d.snapshot(GMAIL_USER)].sort(), [...before].sort(), 'nothing changed in the old mailbox');
    await worker().stop();
    const lines = d.rawlogCommands(GMAIL_USER);
    assert.ok(lines.length > 0);
    for (const line of lines) {
      const m = /^\d+\.\d+ \S+ (UID \S+|\S+)/.exec(line);
      if (!m) continue;
      assert.ok(ALLOWED_COMMANDS.has(m[1].toUpperCase().replace(/^UID /, '')), line);
    }
    const exchange = fake.tokenRequests.filter((r) => r.provider === 'google' && r.grant_type === 'authorization_code');
    assert.deepEqual(
      exchange.map((r) => r.ok),
      [true],
    );
  });

  test('Microsoft: tokens are refreshed before they expire; a revoked consent waits for a new sign-in, which continues', async () => {
    const id = await draft('microsoft', OUTLOOK_USER);
    const started = await api('PUT', `/v1/migrations/${id}/credentials`, {});
    const q = new URL(started.body.sign_in.url).searchParams;
    assert.equal(q.get('scope'), MICROSOFT_SCOPE);
    assert.equal(new URL(started.body.sign_in.url).pathname, '/microsoft/authorize');
    await signIn(s, started.body.sign_in.url);
    assert.equal((await api('POST', `/v1/migrations/${id}/test`)).body.ok, true);
    await api('POST', `/v1/migrations/${id}/scan`);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    Object.assign(worker().limits, { budgetMs: 0, batchThreads: 2 });
    try {
      await api('POST', `/v1/migrations/${id}/start`);
      await s.app.jobs.drain(1);
      assert.equal(await copiedSubjects(id), 2);

      // An hour later the access token has expired at the provider: a new connection refreshes first.
      const refreshesBefore = fake.tokenRequests.filter((r) => r.grant_type === 'refresh_token' && r.ok).length;
      clock.advance(HOUR);
      fake.expireAccessTokens();
      await worker().closeConnection(id);
      await s.app.jobs.drain(1);
      assert.equal(await copiedSubjects(id), 4, 'the copy went on with a refreshed token');
      assert.equal(fake.tokenRequests.filter((r) => r.grant_type === 'refresh_token' && r.ok).length, refreshesBefore + 1);
      await expectState(s, seed.apiKey, id, 'copying');

      // The person withdraws the consent: the refresh is refused (Microsoft's AADSTS shape).
      fake.revokeUser(OUTLOOK_USER);
      fake.expireAccessTokens();
      clock.advance(HOUR);
      await worker().closeConnection(id);
      await s.app.jobs.drain();
      const waiting = await expectState(s, seed.apiKey, id, 'needs_attention');
      assert.equal(waiting.attention.reason, 'sign_in_needed');
      assert.match(waiting.attention.message, /Microsoft no longer accepts this sign-in/);
      assert.match(waiting.attention.message, /invalid_grant: AADSTS65001/);
      assert.ok(waiting.allowed_actions.includes('credentials'));
      await s.app.jobs.drain();
      assert.equal(await copiedSubjects(id), 4, 'it waits for a new sign-in');

      const again = await api('PUT', `/v1/migrations/${id}/credentials`, {});
      assert.equal(again.body.state, 'needs_attention', 'starting a sign-in changes nothing yet');
      await signIn(s, again.body.sign_in.url);
      await expectState(s, seed.apiKey, id, 'copying');
      Object.assign(worker().limits, { budgetMs: 10_000, batchThreads: 200 });
      await s.app.jobs.drain();
      const done = await expectState(s, seed.apiKey, id, 'syncing');
      assert.equal(done.progress.copied, THREADS * 2);
      assert.equal(await copiedSubjects(id), THREADS, 'nothing was copied twice');
      const activity = (await api('GET', `/v1/migrations/${id}/activity?limit=200`)).body.data.map((e: { action: string }) => e.action);
      for (const action of ['sign_in_started', 'credentials_set', 'needs_attention', 'credentials_replaced']) assert.ok(activity.includes(action), action);
    } finally {
      Object.assign(worker().limits, { budgetMs: 10_000, batchThreads: 200 });
    }
  });

  test('a member’s sign-in must come back in that member’s browser; a declined sign-in says so', async () => {
    const id = await draft('google', 'other@gmail-workspace.test');
    const started = await api('PUT', `/v1/migrations/${id}/credentials`, {}, seed.ownerToken);
    assert.equal(started.status, 200);
    const withoutSession = await followSignIn(s, started.body.sign_in.url);
    assert.equal(withoutSession.res.status, 403);
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.credentials.set, false);

    const next = await api('PUT', `/v1/migrations/${id}/credentials`, {}, seed.ownerToken);
    fake.denyNext();
    const declined = await followSignIn(s, next.body.sign_in.url, { cookie: `svc_session=${seed.ownerToken}` });
    assert.equal(declined.res.status, 303);
    assert.match(declined.location!, /sign_in_error=access_denied$/);

    const third = await api('PUT', `/v1/migrations/${id}/credentials`, {}, seed.ownerToken);
    const ok = await followSignIn(s, third.body.sign_in.url, { cookie: `svc_session=${seed.ownerToken}` });
    assert.equal(ok.res.status, 303);
    assert.match(ok.location!, /signed_in=google$/);
    assert.equal((await api('GET', `/v1/migrations/${id}`)).body.credentials.set, true);

    const expired = await api('PUT', `/v1/migrations/${id}/credentials`, {}, seed.ownerToken);
    clock.advance(HOUR);
    assert.equal(
      (await followSignIn(s, expired.body.sign_in.url, { cookie: `svc_session=${seed.ownerToken}` })).res.status,
      400,
      'an expired state is refused',
    );
  });

  test('a credentials link: its page starts the sign-in, any browser finishes it, back to the page, tested, the link used up', async () => {
    const id = await draft('google', LINK_USER);
    const made = await api('POST', `/v1/migrations/${id}/credentials-link`, undefined, seed.ownerToken);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const url = new URL(made.body.url);
    assert.equal(url.pathname, `/migrations/${id}/connect`);
    const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
    const link = (path: string, body: unknown) => s.request('POST', `/v1/migration-links/${id}/${path}`, { body });

    const checked = await link('check', { token });
    assert.equal(checked.status, 200);
    assert.equal(checked.body.kind, 'sign_in');
    assert.equal((await link('sign-in', { token: 'svc_mcl_wrong' })).status, 404);
    const started = await link('sign-in', { token });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    assert.deepEqual(Object.keys(started.body).sort(), ['expires_at', 'provider', 'url'], 'only the address, not the migration');
    assert.equal(new URL(started.body.url).searchParams.get('login_hint'), LINK_USER);
    const declinedStart = await link('sign-in', { token });
    fake.denyNext();
    const declined = await followSignIn(s, declinedStart.body.url);
    assert.equal(declined.res.status, 303);
    assert.equal(declined.location, `${s.app.config.publicUrl}/migrations/${id}/connect?sign_in_error=access_denied`);
    assert.equal((await link('check', { token })).status, 200, 'a declined sign-in leaves the link usable');

    // The member who made the link is not the one signing in: no panel session comes with the callback.
    const again = await link('sign-in', { token });
    const done = await followSignIn(s, again.body.url);
    assert.equal(done.res.status, 303);
    assert.equal(done.location, `${s.app.config.publicUrl}/migrations/${id}/connect?signed_in=google&connected=1`);
    const m = (await api('GET', `/v1/migrations/${id}`)).body;
    assert.equal(m.credentials.set, true);
    assert.equal(m.username, LINK_USER);
    assert.equal(m.state, 'connected');
    assert.equal((await link('check', { token })).status, 404, 'the link is used up');
    assert.equal((await link('sign-in', { token })).status, 404);
    const log = await s.app.db.selectFrom('mailbox_migration_log').select(['action', 'actor_id', 'detail']).where('migration_id', '=', id).execute();
    const set = log.find((e) => e.action === 'credentials_set')!;
    assert.equal(set.actor_id, seed.ownerId, 'in the name of whoever made the link');
    assert.match(set.detail!, /"via":"link"/);

    // A mailbox that takes a password has no sign-in through its link.
    const imap = await api('POST', '/v1/migrations', { provider: 'imap', imap: { host: '127.0.0.1', port: d.port, tls: 'none' } });
    const imapLink = await api('POST', `/v1/migrations/${imap.body.id}/credentials-link`);
    const imapToken = new URLSearchParams(new URL(imapLink.body.url).hash.slice(1)).get('token')!;
    const refused = await s.request('POST', `/v1/migration-links/${imap.body.id}/sign-in`, { body: { token: imapToken } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'not_sign_in_provider');
  });

  test('no token, code, secret or verifier reaches the logs or the API', async () => {
    const text = s.rawLogs.join('\n');
    assert.doesNotMatch(text, /\b(at|rt)-(google|microsoft)-|code-[A-Za-z0-9_-]{10}|google-secret-xyz|ms-secret-xyz/);
    const stored = await s.app.db.selectFrom('mailbox_migrations').select('password_sealed').where('password_sealed', 'is not', null).execute();
    for (const r of stored) assert.doesNotMatch(r.password_sealed!, /rt-|at-/);
    const list = JSON.stringify((await api('GET', '/v1/migrations')).body);
    assert.doesNotMatch(list, /\b(at|rt)-(google|microsoft)-|refresh_token|access_token/);
    const activity = await s.app.db.selectFrom('mailbox_migration_log').select('detail').execute();
    assert.doesNotMatch(JSON.stringify(activity), /\b(at|rt)-(google|microsoft)-|code-/);
  });
});

describe('sign-in providers without the operator’s OAuth client', () => {
  let s: TestServer;
  let seed: Seed;
  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
  });
  after(async () => s?.stop());

  test('409 provider_not_configured naming the settings; the presets say what to set', async () => {
    for (const [provider, setting] of [
      ['google', 'SVC_GOOGLE_CLIENT_ID'],
      ['microsoft', 'SVC_MICROSOFT_CLIENT_ID'],
    ]) {
      const r = await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider, source_address: 'a@b.test' } });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'provider_not_configured');
      assert.ok(r.body.error.message.includes(setting), r.body.error.message);
      assert.ok(r.body.error.settings.includes(setting));
    }
    const presets = (await s.request('GET', '/v1/migrations/presets', { token: seed.apiKey })).body.data as { id: string; configured: boolean }[];
    assert.equal(presets.find((p) => p.id === 'google')!.configured, false);
    assert.equal(presets.find((p) => p.id === 'imap')!.configured, true);
    const unknown = await fetch(`${s.url}/v1/migration-sign-in/callback?state=nothing-like-this&code=x`, { redirect: 'manual' });
    assert.equal(unknown.status, 400);
    assert.equal((await unknown.json()).error.code, 'sign_in_expired');
  });
});
