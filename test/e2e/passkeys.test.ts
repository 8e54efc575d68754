// Passkeys end to end in Chromium: the page runs @simplewebauthn/browser against the server's API
// with Chromium's virtual authenticator, on the server's own origin (http://localhost:<port>, a
// secure context whose host is the RP ID), so every request carries the session cookie and the
// server's Origin like the panel's will.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import {
  addVirtualAuthenticator,
  assertAccessible,
  type BrowserSession,
  browserSkipReason,
  freePort,
  launchBrowser,
  openOnOrigin,
  screenshot,
  type VirtualAuthenticator,
} from '../helpers/browser.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const WEBAUTHN_BUNDLE = path.join(path.dirname(require.resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle', 'index.umd.min.js');

const PAGE = {
  title: 'Sign in with a passkey',
  body: `<main>
    <h1>Passkeys</h1>
    <form id="sign-in" onsubmit="return false">
      <label for="email">E-mail address</label>
      <input id="email" name="email" type="email" autocomplete="username webauthn">
      <button type="submit">Sign in with a passkey</button>
    </form>
    <p id="status" role="status"></p>
  </main>`,
};

type Answer = { status: number; body: any };

describe('passkeys in Chromium', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let browser: BrowserSession;
  let context: BrowserContext;
  let page: Page;
  let authenticator: VirtualAuthenticator;
  let origin: string;
  let email: string;
  let sessionToken: string;

  before(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    s = await startTestServer({ env: { SVC_HTTP_ADDR: `127.0.0.1:${port}`, SVC_PUBLIC_URL: origin } });
    const ws = await seedWorkspace(s.app);
    sessionToken = ws.ownerToken;
    email = (await s.request('GET', '/v1/me', { token: ws.ownerToken })).body.person.email;
    browser = await launchBrowser();
    ({ context, page } = await browser.newPage());
    await openOnOrigin(page, `${origin}/v1/version`, PAGE);
    await page.addScriptTag({ path: WEBAUTHN_BUNDLE });
    authenticator = await addVirtualAuthenticator(page);
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  /** fetch() from the page: same origin, with the page's cookies. */
  function api(method: string, urlPath: string, body?: unknown): Promise<Answer> {
    return page.evaluate(
      async ({ method, urlPath, body }) => {
        const r = await fetch(urlPath, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await r.text();
        return { status: r.status, body: text ? JSON.parse(text) : null };
      },
      { method, urlPath, body },
    );
  }

  /** navigator.credentials.create() through @simplewebauthn/browser, with options from the API. */
  async function registerInPage(name: string): Promise<Answer> {
    const options = await api('POST', '/v1/me/passkeys/options');
    assert.equal(options.status, 200, JSON.stringify(options.body));
    const credential = await page.evaluate((optionsJSON) => (window as any).SimpleWebAuthnBrowser.startRegistration({ optionsJSON }), options.body);
    return api('POST', '/v1/me/passkeys', { credential, name });
  }

  /** navigator.credentials.get(): returns the browser's answer and the server's. */
  async function signInInPage(emailTyped?: string): Promise<{ credential: unknown; options: any; answer: Answer }> {
    const options = await api('POST', '/v1/auth/passkey/options', emailTyped === undefined ? {} : { email: emailTyped });
    assert.equal(options.status, 200, JSON.stringify(options.body));
    const credential = await page.evaluate((optionsJSON) => (window as any).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON }), options.body);
    return { credential, options: options.body, answer: await api('POST', '/v1/auth/passkey/verify', { credential }) };
  }

  async function signedInAs(): Promise<string | null> {
    const me = await api('GET', '/v1/me');
    return me.status === 200 ? me.body.person.email : null;
  }

  test('the page is accessible and on the server’s secure origin', async () => {
    await assertAccessible(page);
    assert.equal(await page.evaluate(() => window.isSecureContext), true);
    assert.equal(await page.evaluate(() => location.origin), origin);
    assert.equal(
      await page.evaluate(
        () =>
          typeof (window as any).SimpleWebAuthnBrowser?.browserSupportsWebAuthn === 'function' &&
          (window as any).SimpleWebAuthnBrowser.browserSupportsWebAuthn(),
      ),
      true,
    );
  });

  test('a signed-in person registers a discoverable passkey', async () => {
    await context.addCookies([{ name: 'svc_session', value: sessionToken, url: origin, httpOnly: true, sameSite: 'Lax' }]);
    assert.equal(await signedInAs(), email);
    const created = await registerInPage('Virtual authenticator');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'Virtual authenticator');
    const [credential] = await authenticator.credentials();
    assert.equal(credential.isResidentCredential, true, 'a discoverable credential');
    assert.equal(credential.rpId, 'localhost');
    // The same authenticator is excluded from a second registration.
    const again = await registerInPage('twice').catch((err: Error) => ({ status: 0, body: err.message }));
    assert.notEqual(again.status, 201);
    assert.equal((await authenticator.credentials()).length, 1);
  });

  test('sign in with the discoverable credential, no address typed; the session works', async () => {
    await context.clearCookies();
    assert.equal(await signedInAs(), null);
    const { options, answer } = await signInInPage();
    assert.equal(options.allowCredentials, undefined);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.person.email, email);
    const cookies = await context.cookies(origin);
    assert.ok(
      cookies.some((c) => c.name === 'svc_session' && c.httpOnly),
      'the session cookie is set',
    );
    assert.equal(await signedInAs(), email, 'GET /v1/me with the cookie');
  });

  test('sign in after typing the address; the same answer twice is refused', async () => {
    await context.clearCookies();
    await page.fill('#email', email);
    const typed = await page.inputValue('#email');
    const { credential, options, answer } = await signInInPage(typed);
    const [stored] = await authenticator.credentials();
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [Buffer.from(stored.credentialId, 'base64').toString('base64url')],
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(await signedInAs(), email);

    const replay = await api('POST', '/v1/auth/passkey/verify', { credential });
    assert.equal(replay.status, 401);
    assert.match(replay.body.error.message, /used or expired/);
  });

  test('a sign counter that does not grow is refused (a cloned authenticator)', async () => {
    const [stored] = await authenticator.credentials();
    assert.ok(stored.signCount >= 2, `the authenticator counts (${stored.signCount})`);
    await authenticator.setSignCount(stored, 0);
    await context.clearCookies();
    const { answer } = await signInInPage();
    assert.equal(answer.status, 401);
    assert.match(answer.body.error.message, /counter did not grow/);
    assert.equal(await signedInAs(), null);

    await authenticator.setSignCount(stored, stored.signCount + 10);
    assert.equal((await signInInPage()).answer.status, 200, 'a growing counter is accepted again');
  });

  test('list, rename and delete from the page; a deleted passkey no longer signs in', async () => {
    const list = await api('GET', '/v1/me/passkeys');
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    const passkey = list.body.data[0];
    assert.ok(passkey.last_used_at);
    const renamed = await api('PATCH', `/v1/me/passkeys/${passkey.id}`, { name: 'Test laptop' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal((await api('GET', '/v1/me/passkeys')).body.data[0].name, 'Test laptop');
    await page.evaluate((text) => (document.getElementById('status')!.textContent = text), 'Passkey renamed');
    await screenshot(page, 'passkeys-signed-in');

    assert.equal((await api('DELETE', `/v1/me/passkeys/${passkey.id}`)).status, 204);
    assert.deepEqual((await api('GET', '/v1/me/passkeys')).body.data, []);
    await context.clearCookies();
    const { answer } = await signInInPage();
    assert.equal(answer.status, 401);
    assert.match(answer.body.error.message, /not registered/);
  });
});
