// An e-mail channel's outgoing account in a real browser (issue 38): choosing Google, "Sign in with
// Google" goes to the (loopback fake) provider and back to the inbox's settings, connected; a
// Microsoft channel is connected by keyboard alone; a revoked grant shows "sign in again" in Turkish
// on a phone, and signing in again connects it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { ARTIFACTS_DIR, assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { type OAuthFake, startOAuthFake } from '../helpers/oauth-fake.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const GMAIL = 'support@gmail-e2e.test';
const OUTLOOK = 'help@outlook-e2e.test';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

describe('an e-mail channel sends with a Google or Microsoft sign-in', { skip: browserSkipReason() }, () => {
  let fake: OAuthFake;
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let google: string;
  let microsoft: string;

  before(async () => {
    fake = await startOAuthFake({ google: { id: 'g-client', secret: 'g-secret' }, microsoft: { id: 'm-client', secret: 'm-secret' } });
    // The provider sends the browser to the public URL: the server listens where it says.
    const port = await freePort();
    s = await startTestServer({
      clock: systemClock,
      env: {
        SVC_HTTP_ADDR: `127.0.0.1:${port}`,
        SVC_GOOGLE_CLIENT_ID: 'g-client',
        SVC_GOOGLE_CLIENT_SECRET: 'g-secret',
        SVC_MICROSOFT_CLIENT_ID: 'm-client',
        SVC_MICROSOFT_CLIENT_SECRET: 'm-secret',
        SVC_OAUTH_ENDPOINT: fake.url,
      },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    const make = async (name: string, address: string) =>
      (await s.request('POST', '/v1/channels', { token: seed.apiKey, body: { kind: 'email', inbox_id: seed.inboxId, name, address } })).body.id as string;
    google = await make('Gmail', GMAIL);
    microsoft = await make('Outlook', OUTLOOK);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await fake?.stop();
  });

  async function panelPage(opts: { tr?: boolean; phone?: boolean } = {}) {
    const { context, page } = await browser.newPage(
      opts.phone
        ? { viewport: { width: 390, height: 844 }, locale: opts.tr ? 'tr-TR' : 'en-US', isMobile: true, hasTouch: true }
        : { viewport: { width: 1280, height: 800 }, locale: 'en-US' },
    );
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    return { page, errors };
  }

  /** The channel's card (the settings page scrolls inside its pane, so a full-page picture would miss it). */
  async function shot(locator: ReturnType<typeof card>, name: string) {
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    await locator.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`) });
  }
  const card = (page: Awaited<ReturnType<typeof panelPage>>['page'], name: string) => page.getByRole('region', { name: new RegExp(`: ${name}$`) });
  const channel = async (id: string) => ((await s.request('GET', '/v1/channels', { token: seed.apiKey })).body.data as any[]).find((c) => c.id === id);

  test('Google: choose it, sign in, back connected; Microsoft by keyboard', async () => {
    const { page, errors } = await panelPage();
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const gmail = card(page, 'Gmail');
    await gmail.getByRole('group', { name: 'Send replies with' }).getByRole('radio', { name: 'Google (Gmail, Google Workspace)' }).check();
    assert.equal(await gmail.getByLabel('SMTP server', { exact: true }).isVisible(), false, 'no SMTP fields for a sign-in');
    await gmail.getByText('No password is stored.').waitFor();
    await assertAccessible(page);
    await shot(gmail, 'mail-sign-in-google-choice');
    await gmail.getByRole('button', { name: 'Sign in with Google' }).click();
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'google' && url.searchParams.get('channel') === google);
    const back = card(page, 'Gmail');
    await back.getByText('Signed in with Google.').waitFor();
    await back.getByText(`Connected to Google as ${GMAIL}`).waitFor();
    assert.equal(
      await back.getByRole('group', { name: 'Send replies with' }).getByRole('radio', { name: 'Google (Gmail, Google Workspace)' }).isChecked(),
      true,
    );
    assert.ok(fake.authorizeRequests.some((q) => q.get('login_hint') === GMAIL && q.get('code_challenge_method') === 'S256'));
    const shown = await channel(google);
    assert.equal(shown.smtp_auth, 'google');
    assert.equal(shown.signed_in.account, GMAIL);
    await assertAccessible(page);
    await shot(back, 'mail-sign-in-google-connected');

    // Microsoft with the keyboard only: focus the radio, arrow to Microsoft, Tab to the button, Enter.
    const outlook = card(page, 'Outlook');
    await outlook.getByRole('group', { name: 'Send replies with' }).getByRole('radio', { name: 'An SMTP server and password' }).focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(
      await outlook.getByRole('group', { name: 'Send replies with' }).getByRole('radio', { name: 'Microsoft 365 or Outlook.com' }).isChecked(),
      true,
    );
    const signIn = outlook.getByRole('button', { name: 'Sign in with Microsoft' });
    await signIn.waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await signIn.evaluate((el) => el === document.activeElement), true, 'the sign-in button is next');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'microsoft');
    await card(page, 'Outlook').getByText(`Connected to Microsoft as ${OUTLOOK}`).waitFor();
    assert.match(fake.authorizeRequests.at(-1)!.get('scope')!, /SMTP\.Send/);
    assert.equal((await channel(microsoft)).sign_in_required, false);
    assert.deepEqual(errors, []);
  });

  test('revoked, in Turkish on a phone: "sign in again" with the provider’s words, then connected again', async () => {
    await s.app.db
      .updateTable('channel_grants')
      .set({ state: 'revoked', error: 'invalid_grant: Token has been expired or revoked.', revoked_at: new Date().toISOString() })
      .where('channel_id', '=', google)
      .execute();
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    const { page, errors } = await panelPage({ tr: true, phone: true });
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const gmail = card(page, 'Gmail');
    const alert = gmail.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Yeniden oturum açın: Google, support@gmail-e2e\.test .*Token has been expired or revoked\./);
    await assertAccessible(page);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scrolling (${width})`);
    await shot(gmail, 'mail-sign-in-revoked-tr-phone');
    await gmail.getByRole('button', { name: 'Google ile yeniden oturum aç' }).click();
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'google');
    await card(page, 'Gmail').getByText(`Google hesabına ${GMAIL} olarak bağlı`).waitFor();
    assert.equal((await channel(google)).signed_in.state, 'ok');
    await shot(card(page, 'Gmail'), 'mail-sign-in-connected-tr-phone');
    assert.deepEqual(errors, []);
  });
});
