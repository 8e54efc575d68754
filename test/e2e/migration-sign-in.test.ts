// The migration wizard's Connect step for sign-in providers, in a real browser: "Sign in with
// Google" goes to the (loopback fake) provider, which consents and sends the browser to the server's
// callback; the wizard comes back, tests the connection (IMAP XOAUTH2 against Dovecot's oauth2
// passdb) and is connected. A provider the operator has not set up says what must be set; the
// presets' names and notes are in Turkish in the Turkish panel.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, freePort, launchBrowser, panelPage, screenshot } from '../helpers/browser.js';
import { dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { fillBulkMailbox } from '../helpers/migration.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, startSignInScene } from '../helpers/sign-in.js';

const MAILBOX = 'team@gmail-workspace.test';
const LINK_MAILBOX = 'owner@gmail-workspace.test';

describe('signing in to Google from the migration wizard', { skip: browserSkipReason() ?? dovecotMissing }, () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;

  before(async () => {
    scene = await startSignInScene({
      clients: { google: { id: 'g-client', secret: 'g-secret' }, microsoft: { id: 'm-client', secret: 'm-secret' } },
      // Google is set up; Microsoft is not.
      providers: ['google'],
      dovecot: { users: [MAILBOX, LINK_MAILBOX], prepare: (d) => fillBulkMailbox(d, MAILBOX, { threads: 3, perThread: 1, now: new Date() }) },
      clock: systemClock,
      // The provider sends the browser to the public URL: the server listens where it says.
      env: { SVC_HTTP_ADDR: `127.0.0.1:${await freePort()}` },
      stopJobs: true,
      workspaceName: 'Acme',
    });
    ({ fake, s, seed } = scene);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await scene?.stop();
  });

  let connectedId: string | undefined;

  const open = (viewport = { width: 1280, height: 800 }) => panelPage(browser, s.url, seed.ownerToken, { viewport, locale: 'en-US' });

  test('Sign in with Google, back to the wizard, connected', async () => {
    const { page, errors } = await open();
    await page.goto(`${s.url}/settings/migrations/new`);
    await page.getByLabel('Mailbox address').fill(MAILBOX);
    await page.getByLabel('Provider').selectOption('microsoft');
    const notSetUp = page.getByTestId('sign-in-not-configured');
    await notSetUp.waitFor();
    assert.match(await notSetUp.innerText(), /SVC_MICROSOFT_CLIENT_ID, SVC_MICROSOFT_CLIENT_SECRET/);
    await assertAccessible(page);

    await page.getByLabel('Provider').selectOption('google');
    assert.equal(await notSetUp.count(), 0);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/settings\/migrations\/mig_/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const button = page.getByRole('button', { name: 'Sign in with Google' });
    await button.waitFor();
    await page.getByText('uses it read-only').waitFor();
    assert.equal(await page.getByLabel('App password').count(), 0, 'no password is asked for');
    await assertAccessible(page);

    await button.click();
    await page.waitForURL((url) => url.pathname === `/settings/migrations/${id}` && url.searchParams.get('signed_in') === 'google');
    await page.getByText('Signed in with Google.').waitFor();
    await page.getByText('Connected. The folders were listed').waitFor();
    const m = (await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey })).body;
    assert.equal(m.state, 'connected');
    assert.equal(m.credentials.set, true);
    assert.ok(fake.authorizeRequests.some((q) => q.get('login_hint') === MAILBOX && q.get('code_challenge_method') === 'S256'));
    await page.getByText('Signed in. The access is stored sealed').waitFor();
    // The wizard speaks of a sign-in, never of changing a password.
    assert.equal(await page.locator('.mig-actions [data-action="credentials"]').innerText(), 'Sign in again');
    assert.doesNotMatch(await page.locator('main').innerText(), /Change password|app password|Password entered/i);
    await page.locator('.mig-activity summary').click();
    await page.locator('.mig-log li', { hasText: 'Signed in with the provider' }).waitFor();
    await page.locator('.mig-log li', { hasText: 'Sign-in with the provider started' }).waitFor();
    await assertAccessible(page);
    assert.deepEqual(errors, []);
    connectedId = id;
  });

  test('a connected Google mailbox in Turkish on a phone: "Sign in again", no password', async () => {
    assert.ok(connectedId, 'the sign-in test ran first');
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const { page, errors } = await open({ width: 390, height: 844 });
      await page.goto(`${s.url}/settings/migrations/${connectedId}`);
      await page.locator('h1 [data-state="connected"]').waitFor();
      const again = page.locator('.mig-actions [data-action="credentials"]');
      assert.equal(await again.innerText(), 'Yeniden oturum aç');
      await page.locator('main p.muted', { hasText: 'Google (Google ile oturum açarak)' }).first().waitFor();
      assert.doesNotMatch(await page.locator('main').innerText(), /Parolayı değiştir|uygulama parolası/i);
      // By the keyboard: the action opens the Connect step with the provider's sign-in button.
      for (let i = 0; i < 40 && !(await page.evaluate(() => document.activeElement?.getAttribute('data-action') === 'credentials')); i++)
        await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.searchParams.get('step') === 'connect');
      await page.getByRole('button', { name: 'Google ile oturum aç' }).waitFor();
      await assertAccessible(page);
      await screenshot(page, 'migration-sign-in-again-tr-phone');
      assert.deepEqual(errors, []);
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });

  test('a credentials link, signed out, on a phone by the keyboard: the page starts the Google sign-in and comes back connected', async () => {
    const created = await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider: 'google', source_address: LINK_MAILBOX } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    const made = await s.request('POST', `/v1/migrations/${id}/credentials-link`, { token: seed.ownerToken });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    // Whoever opens the link has no panel session: the link is the authority.
    const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'tr-TR' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(made.body.url);
    await page.getByRole('heading', { name: `${LINK_MAILBOX} posta kutusunu bağla` }).waitFor();
    await page.getByText('Google parola yerine oturum açarak bağlanır').waitFor();
    assert.equal(await page.getByLabel('Parola', { exact: false }).count(), 0, 'no password is asked for');
    await assertAccessible(page);
    await screenshot(page, 'connect-link-sign-in-tr-phone');
    await page.keyboard.press('Tab');
    for (let i = 0; i < 10 && !(await page.evaluate(() => document.activeElement?.textContent === 'Google ile oturum aç')); i++)
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/migrations/${id}/connect` && url.searchParams.get('signed_in') === 'google');
    assert.equal(new URL(page.url()).searchParams.get('connected'), '1');
    await page.getByText('Google ile oturum açıldı.').waitFor();
    await page.getByText('Bağlandı. Bu sayfayı kapatabilirsiniz').waitFor();
    await assertAccessible(page);
    const m = (await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey })).body;
    assert.equal(m.state, 'connected');
    assert.equal(m.credentials.set, true);
    assert.deepEqual(errors, []);
    await context.close();

    // The link is used up: opened again, the page says so (in English for an English browser).
    const { context: again, page: later } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await later.goto(made.body.url);
    await later.getByText('This link is unknown, used or expired. Ask for a new one.').waitFor();
    await assertAccessible(later);
    await again.close();
  });

  test('the presets’ names and notes in Turkish', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const { page } = await open();
      await page.goto(`${s.url}/settings/migrations/new`);
      await page.getByLabel('Sağlayıcı').locator('option[value="google"]').waitFor({ state: 'attached' });
      const options = await page.getByLabel('Sağlayıcı').locator('option').allInnerTexts();
      assert.ok(options.includes('Google (Google ile oturum açarak)'), options.join(' | '));
      assert.ok(
        options.some((o) => o.startsWith('Microsoft 365 ve Outlook.com (Microsoft ile oturum açarak) — sunucu kurulumu gerekir')),
        options.join(' | '),
      );
      assert.ok(options.includes('Başka bir IMAP sunucusu'));
      await page.getByLabel('Sağlayıcı').selectOption('gmail');
      await page.getByText('İki Adımlı Doğrulama ve IMAP erişimi açık olmalıdır').waitFor();
      await page.getByLabel('Sağlayıcı').selectOption('microsoft');
      await page.getByText('ile oturum açma bu sunucuda kurulu değil').waitFor();
      await assertAccessible(page);
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });
});
