// Signing in with Google and Microsoft in tests (issue 38): the loopback OAuth fake and a real
// server set up to use it, and where a test asks for them, a real Dovecot whose oauth2 passdb asks
// the fake about every token (IMAP XOAUTH2) and an SMTP sink that takes only the fake's live tokens
// (SMTP XOAUTH2). followSignIn() and signIn() go through a sign-in as a browser would.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../src/platform/clock.js';
import { type Dovecot, startDovecot } from './dovecot.js';
import { type Seed, seedWorkspace } from './fixtures.js';
import { type FakeProvider, type OAuthFake, startOAuthFake } from './oauth-fake.js';
import { startTestServer, type TestServer } from './server.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

export interface SignInSceneOptions {
  /** The fake's OAuth clients; the server is given those of `providers`. */
  clients: Record<FakeProvider, { id: string; secret: string }>;
  /** The providers the operator has set up (default: both). */
  providers?: FakeProvider[];
  /**
   * Starts Dovecot (SVC_OAUTH_IMAP) before the server: `users` take only XOAUTH2 (their passwords are
   * never used), then `prepare` adds and fills the test's own mailboxes.
   */
  dovecot?: { users?: string[]; prepare?: (d: Dovecot) => unknown };
  /** Starts the XOAUTH2 SMTP sink (SVC_OAUTH_SMTP). */
  smtpSink?: boolean;
  clock?: Clock;
  /** More settings for the server (they win over the scene's). */
  env?: Record<string, string>;
  /** Stops the server's background jobs (the test drains them when it wants). */
  stopJobs?: boolean;
  workspaceName?: string;
}

export interface SignInScene {
  fake: OAuthFake;
  s: TestServer;
  seed: Seed;
  /** Only with the `dovecot` option. */
  readonly d: Dovecot;
  /** Only with the `smtpSink` option. */
  readonly sink: SmtpSink;
  stop(): Promise<void>;
}

const SETTINGS: Record<FakeProvider, [string, string]> = {
  google: ['SVC_GOOGLE_CLIENT_ID', 'SVC_GOOGLE_CLIENT_SECRET'],
  microsoft: ['SVC_MICROSOFT_CLIENT_ID', 'SVC_MICROSOFT_CLIENT_SECRET'],
};

export async function startSignInScene(opts: SignInSceneOptions): Promise<SignInScene> {
  let fake: OAuthFake | undefined;
  let d: Dovecot | undefined;
  let sink: SmtpSink | undefined;
  let s: TestServer | undefined;
  const stop = async () => {
    await s?.stop();
    await d?.stop();
    await sink?.close();
    await fake?.stop();
  };
  try {
    const live = await startOAuthFake(opts.clients);
    fake = live;
    const env: Record<string, string> = { SVC_OAUTH_ENDPOINT: live.url };
    for (const provider of opts.providers ?? (['google', 'microsoft'] as const)) {
      const [id, secret] = SETTINGS[provider];
      env[id] = opts.clients[provider].id;
      env[secret] = opts.clients[provider].secret;
    }
    if (opts.dovecot) {
      d = await startDovecot({ oauth2IntrospectionUrl: live.introspectionUrl });
      for (const user of opts.dovecot.users ?? []) d.addUser(user, `unused-${randomBytes(6).toString('hex')}`);
      await opts.dovecot.prepare?.(d);
      env.SVC_OAUTH_IMAP = `127.0.0.1:${d.port}`;
      // Dovecot listens on loopback, which the server reaches only when allowed.
      env.SVC_MIGRATION_ALLOW_PRIVATE = '1';
    }
    if (opts.smtpSink) {
      sink = await startSmtpSink({ xoauth2: (user, token) => live.accessTokenValid(user, token) });
      env.SVC_OAUTH_SMTP = `127.0.0.1:${sink.port}`;
    }
    s = await startTestServer({ clock: opts.clock, env: { ...env, ...opts.env } });
    if (opts.stopJobs) await s.app.jobs.stop();
    const seed = await seedWorkspace(s.app, { name: opts.workspaceName });
    return {
      fake: live,
      s,
      seed,
      get d() {
        assert.ok(d, 'the scene was started without Dovecot');
        return d;
      },
      get sink() {
        assert.ok(sink, 'the scene was started without the SMTP sink');
        return sink;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Follows a sign-in like a browser: the provider's page (the fake consents at once and redirects),
 * then the server's callback, with `headers` (e.g. a session cookie). Returns the callback's answer.
 */
export async function followSignIn(s: TestServer, url: string, headers: Record<string, string> = {}) {
  const atProvider = await fetch(url, { redirect: 'manual' });
  assert.equal(atProvider.status, 302);
  const callback = new URL(atProvider.headers.get('location')!);
  assert.equal(callback.pathname, '/v1/migration-sign-in/callback', 'one redirect URI for migrations and channels');
  const callbackPath = `${callback.pathname}${callback.search}`;
  const res = await fetch(`${s.url}${callbackPath}`, { redirect: 'manual', headers });
  return { res, callbackPath, location: res.headers.get('location') };
}

/** A sign-in that succeeds: the callback sends the browser back signed in. Returns where to. */
export async function signIn(s: TestServer, url: string): Promise<string> {
  const { res, location } = await followSignIn(s, url);
  assert.equal(res.status, 303);
  assert.match(location ?? '', /[?&]signed_in=/);
  return location!;
}
