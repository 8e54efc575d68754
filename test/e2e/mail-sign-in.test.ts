// An e-mail channel's outgoing account in a real browser (issue 38): choosing Google, "Sign in with
// Google" goes to the (loopback fake) provider and back to the inbox's settings, connected; a
// Microsoft channel is connected by keyboard alone; a revoked grant shows "sign in again" in Turkish
// on a phone, and signing in again connects it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, freePort, launchBrowser, panelPage, phone, screenshotOf } from '../helpers/browser.js';
import type { Seed } from '../helpers/fixtures.js';
import { postEmailChannel, shownChannel } from '../helpers/mail.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, startSignInScene } from '../helpers/sign-in.js';

const GMAIL = 'support@gmail-e2e.test';
const OUTLOOK = 'help@outlook-e2e.test';

describe('an e-mail channel sends with a Google or Microsoft sign-in', { skip: browserSkipReason() }, () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let google: string;
  let microsoft: string;

  before(async () => {
    scene = await startSignInScene({
      clients: { google: { id: 'g-client', secret: 'g-secret' }, microsoft: { id: 'm-client', secret: 'm-secret' } },
      clock: systemClock,
      // The provider sends the browser to the public URL: the server listens where it says.
      env: { SVC_HTTP_ADDR: `127.0.0.1:${await freePort()}` },
      stopJobs: true,
      workspaceName: 'Acme',
    });
    ({ fake, s, seed } = scene);
    google = await postEmailChannel(s, seed.apiKey, { inbox_id: seed.inboxId, name: 'Gmail', address: GMAIL });
    microsoft = await postEmailChannel(s, seed.apiKey, { inbox_id: seed.inboxId, name: 'Outlook', address: OUTLOOK });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await scene?.stop();
  });

  const open = (options?: BrowserContextOptions) => panelPage(browser, s.url, seed.ownerToken, options);
  /** The channel's card (the settings page scrolls inside its pane: screenshots are of the card). */
  const card = (page: Page, name: string) => page.getByRole('region', { name: new RegExp(`: ${name}$`) });
  const channel = (id: string) => shownChannel(s, seed.apiKey, id);

  test('Google: choose it, sign in, back connected; Microsoft by keyboard', async () => {
    const { page, errors } = await open();
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const gmail = card(page, 'Gmail');
    await gmail.getByRole('group', { name: 'Send replies with' }).getByRole('radio', { name: 'Google (Gmail, Google Workspace)' }).check();
    assert.equal(await gmail.getByLabel('SMTP server', { exact: true }).isVisible(), false, 'no SMTP fields for a sign-in');
    await gmail.getByText('No password is stored.').waitFor();
    await assertAccessible(page);
    await screenshotOf(gmail, 'mail-sign-in-google-choice');
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
    await screenshotOf(back, 'mail-sign-in-google-connected');

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
    const { page, errors } = await open(phone('tr-TR'));
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const gmail = card(page, 'Gmail');
    const alert = gmail.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /Yeniden oturum açın: Google, support@gmail-e2e\.test .*Token has been expired or revoked\./);
    await assertAccessible(page);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scrolling (${width})`);
    await screenshotOf(gmail, 'mail-sign-in-revoked-tr-phone');
    await gmail.getByRole('button', { name: 'Google ile yeniden oturum aç' }).click();
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'google');
    await card(page, 'Gmail').getByText(`Google hesabına ${GMAIL} olarak bağlı`).waitFor();
    assert.equal((await channel(google)).signed_in.state, 'ok');
    await screenshotOf(card(page, 'Gmail'), 'mail-sign-in-connected-tr-phone');
    assert.deepEqual(errors, []);
  });
});
