// "Read this mailbox" with a Google or Microsoft sign-in, in a real browser (issue 38): choosing
// Google under "Read it through" goes to the (loopback fake) provider and back, and the card shows
// the reader connected with IDLE to a real Dovecot that checks each XOAUTH2 token with the fake;
// then in Turkish on a phone, by keyboard alone, Microsoft the same way, and once its sign-in is
// revoked the card says so with Microsoft's words (the failed step in Turkish) and signing in
// again (Enter) connects it again. A card that reads through a working sign-in offers no button to
// sign in, only to stop.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, freePort, launchBrowser, panelPage, phone, screenshotOf } from '../helpers/browser.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { postEmailChannel, shownChannel } from '../helpers/mail.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';
import type { OAuthFake } from '../helpers/oauth-fake.js';
import type { TestServer } from '../helpers/server.js';
import { type SignInScene, startSignInScene } from '../helpers/sign-in.js';

const GMAIL = 'support@gmail-read-e2e.test';
const OUTLOOK = 'help@outlook-read-e2e.test';

describe('reading a mailbox with a Google or Microsoft sign-in, in the panel', { skip: browserSkipReason() ?? dovecotMissing }, () => {
  let scene: SignInScene;
  let fake: OAuthFake;
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let google: string;
  let microsoft: string;

  before(async () => {
    scene = await startSignInScene({
      clients: { google: { id: 'g-read', secret: 'g-read-secret' }, microsoft: { id: 'm-read', secret: 'm-read-secret' } },
      dovecot: { users: [GMAIL, OUTLOOK] },
      clock: systemClock,
      // The provider sends the browser to the public URL: the server listens where it says.
      env: { SVC_HTTP_ADDR: `127.0.0.1:${await freePort()}`, SVC_MAILBOX_READER_RETRY_SECONDS: '600' },
      workspaceName: 'Acme',
    });
    ({ fake, d, s, seed } = scene);
    google = await postEmailChannel(s, seed.apiKey, { inbox_id: seed.inboxId, name: 'Gmail', address: GMAIL });
    microsoft = await postEmailChannel(s, seed.apiKey, { inbox_id: seed.inboxId, name: 'Outlook', address: OUTLOOK });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await scene?.stop();
  });

  const open = (options?: BrowserContextOptions) => panelPage(browser, s.url, seed.ownerToken, options);
  const card = (page: Page, name: string) => page.getByRole('region', { name: new RegExp(`: ${name}$`) });
  const reading = (page: Page, name: string, title = 'Read this mailbox') => card(page, name).getByRole('region', { name: title, exact: true });
  const channel = (id: string) => shownChannel(s, seed.apiKey, id);

  test('en, desktop: Google under "Read it through", sign in, connected with IDLE, the mail read', async () => {
    const { page, errors } = await open();
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const gmail = reading(page, 'Gmail');
    await gmail.getByRole('group', { name: 'Read it through' }).getByRole('radio', { name: 'Google (Gmail, Google Workspace)' }).check();
    assert.equal(await gmail.getByLabel('IMAP server', { exact: true }).isVisible(), false, 'no IMAP fields for a sign-in');
    await gmail.getByText(/no password is stored/).waitFor();
    await assertAccessible(page);
    await screenshotOf(gmail, 'mailbox-reader-google-choice-en-desktop');
    await gmail.getByRole('button', { name: 'Read with Google' }).click();
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'google' && url.searchParams.get('channel') === google);
    const back = reading(page, 'Gmail');
    await back.getByRole('status').filter({ hasText: 'Connected: new mail arrives within seconds (IMAP IDLE).' }).waitFor({ timeout: 20_000 });
    assert.ok(fake.authorizeRequests.some((q) => q.get('login_hint') === GMAIL && q.get('code_challenge_method') === 'S256'));
    await back.getByText(`Read through Google, signed in as ${GMAIL}.`).waitFor();
    assert.equal(await back.getByRole('button', { name: 'Read with Google' }).count(), 0, 'nothing left to sign in to');
    const shown = await channel(google);
    assert.equal(shown.reading.kind, 'google');
    assert.equal(shown.signed_in.account, GMAIL);
    assert.equal(shown.smtp_auth, 'password', 'reading alone does not change how replies are sent');
    const id = newMessageId('customer.test');
    d.deliver(GMAIL, 'INBOX', [
      { raw: await buildMail({ from: 'Ada <ada@customer.test>', to: GMAIL, subject: 'Read live', messageId: id, date: new Date() }), isNew: true },
    ]);
    await waitUntil(async () => !!(await channel(google)).reader.last_read_at, 15_000, 'the mail read');
    await page.reload();
    await reading(page, 'Gmail')
      .getByText(/Last mail read/)
      .waitFor();
    await assertAccessible(page);
    await screenshotOf(reading(page, 'Gmail'), 'mailbox-reader-google-connected-en-desktop');
    assert.deepEqual(errors, []);
  });

  test('tr, phone, keyboard only: Microsoft, sign in, connected; revoked, the card says so with Microsoft’s words', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    const { page, errors } = await open(phone('tr-TR'));
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const outlook = reading(page, 'Outlook', 'Bu posta kutusunu oku');
    const kinds = outlook.getByRole('group', { name: 'Okuma yolu' });
    await kinds.getByRole('radio', { name: 'IMAP sunucusu ve parola' }).focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(await kinds.getByRole('radio', { name: 'Microsoft 365 veya Outlook.com' }).isChecked(), true);
    const start = outlook.getByRole('button', { name: 'Microsoft ile oku' });
    await start.waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await start.evaluate((el) => el === document.activeElement), true, 'the sign-in button is next');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scrolling (${width})`);
    await screenshotOf(outlook, 'mailbox-reader-microsoft-choice-tr-phone');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'microsoft' && url.searchParams.get('channel') === microsoft);
    const back = reading(page, 'Outlook', 'Bu posta kutusunu oku');
    await back.getByRole('status').filter({ hasText: 'Bağlı: yeni postalar saniyeler içinde gelir (IMAP IDLE).' }).waitFor({ timeout: 20_000 });
    assert.match(fake.authorizeRequests.at(-1)!.get('scope')!, /IMAP\.AccessAsUser\.All/);
    await assertAccessible(page);
    await screenshotOf(back, 'mailbox-reader-microsoft-connected-tr-phone');

    // Revoked at Microsoft: the next session's token and its renewal are refused.
    fake.revokeUser(OUTLOOK);
    fake.expireAccessTokens();
    await s.request('PATCH', `/v1/channels/${microsoft}`, { token: seed.apiKey, body: { reading: null } });
    await s.request('PATCH', `/v1/channels/${microsoft}`, { token: seed.apiKey, body: { reading: { kind: 'microsoft' } } });
    await waitUntil(async () => (await channel(microsoft)).reader?.state === 'needs_attention', 15_000, 'the reader to fail');
    // Opened afresh (not reloaded: the address still says signed_in from the first sign-in).
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const failed = reading(page, 'Outlook', 'Bu posta kutusunu oku').getByRole('status');
    await failed
      .filter({ hasText: /^İlgilenmeniz gerekiyor: oturum açma adımı başarısız: Microsoft no longer accepts the sign-in of this channel \(invalid_grant/ })
      .waitFor();
    // Waiting helps nothing here: the card asks for a new sign-in instead of naming a retry time.
    await failed.getByText('Okuma yeni bir oturum açmayı bekliyor: sağlayıcı bu oturumu reddediyor. Aşağıdan yeniden oturum açın.').waitFor();
    assert.equal(await failed.getByText(/kendiliğinden yeniden denenecek/).count(), 0);
    await assertAccessible(page);
    await screenshotOf(reading(page, 'Outlook', 'Bu posta kutusunu oku'), 'mailbox-reader-microsoft-revoked-tr-phone');
    // Sign in again, by keyboard: the reader connects again at once (its retry was 10 minutes away).
    const again = reading(page, 'Outlook', 'Bu posta kutusunu oku').getByRole('button', { name: 'Microsoft ile yeniden oturum aç' });
    await again.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('signed_in') === 'microsoft' && url.searchParams.get('channel') === microsoft);
    await reading(page, 'Outlook', 'Bu posta kutusunu oku')
      .getByRole('status')
      .filter({ hasText: 'Bağlı: yeni postalar saniyeler içinde gelir (IMAP IDLE).' })
      .waitFor({ timeout: 20_000 });
    await reading(page, 'Outlook', 'Bu posta kutusunu oku').getByText(`Microsoft üzerinden, ${OUTLOOK} olarak oturum açılarak okunuyor.`).waitFor();
    assert.deepEqual(errors, []);
  });
});
