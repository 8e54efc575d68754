// "Read this mailbox" on an e-mail channel in a real browser, against a real Dovecot: a wrong
// password is refused with the step and the server's words and nothing is saved; the right one
// starts the reader, whose state (IDLE) and last mail read the page shows. Then in Turkish at
// phone size, by keyboard only: the form is filled and sent with Enter, and reading is stopped.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { buildMail, newMessageId } from '../helpers/mailbox.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const USER = 'help@acme.test';
const PASSWORD = 'imap-pass-42';

describe('reading a mailbox, in the panel', { skip: browserSkipReason() ?? dovecotMissing }, () => {
  let s: TestServer;
  let d: Dovecot;
  let seed: Seed;
  let browser: BrowserSession;
  let channelId: string;

  before(async () => {
    d = await startDovecot();
    d.addUser(USER, PASSWORD);
    s = await startTestServer({ clock: systemClock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1' } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    channelId = (await seedEmailChannel(s.app, seed, { address: USER })).id;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await d?.stop();
  });

  const readingOf = async () => (await s.request('GET', '/v1/channels', { token: seed.apiKey })).body.data.find((c: { id: string }) => c.id === channelId);

  test('en, desktop: a wrong password is refused with the server’s words; the right one shows the reader connected and the last mail read; tr, phone, keyboard: stop reading', async () => {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-GB' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const reading = page.getByRole('region', { name: 'Read this mailbox' });
    await reading.waitFor();
    await reading.getByLabel('IMAP server', { exact: true }).fill(d.host);
    await reading.getByLabel('Port').fill(String(d.port));
    await reading.getByLabel('Encryption').selectOption('none');
    await reading.getByLabel('Port').fill(String(d.port));
    await reading.getByLabel('User name').fill(USER);
    await reading.getByLabel('Password', { exact: true }).fill('not-the-password');
    await reading.getByRole('button', { name: 'Check and start reading' }).click();
    await reading
      .getByRole('alert')
      .filter({ hasText: /login failed/ })
      .waitFor();
    assert.equal((await readingOf()).reading, null, 'nothing saved');
    await reading.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await reading.getByRole('button', { name: 'Check and start reading' }).click();
    await reading.getByRole('status').filter({ hasText: 'Connected: new mail arrives within seconds (IMAP IDLE).' }).waitFor({ timeout: 20_000 });
    await reading.getByText('No mail read yet.').waitFor();
    const id = newMessageId('customer.test');
    d.deliver(USER, 'INBOX', [
      { raw: await buildMail({ from: 'Ada <ada@customer.test>', to: USER, subject: 'Hello there', messageId: id, date: new Date() }), isNew: true },
    ]);
    await waitUntil(async () => !!(await readingOf()).reader.last_read_at, 15_000, 'the mail read');
    await page.reload();
    await reading.getByText(/Last mail read/).waitFor();
    await assertAccessible(page);
    await reading.scrollIntoViewIfNeeded();
    await screenshot(page, 'panel-mailbox-reader-en-desktop');
    await context.close();

    // Turkish, phone size, keyboard only.
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'tr-TR' });
    phone.page.on('pageerror', (e) => errors.push(String(e)));
    await phone.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await phone.page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const okuma = phone.page.getByRole('region', { name: 'Bu posta kutusunu oku' });
    await okuma.getByRole('status').filter({ hasText: 'Bağlı: yeni postalar saniyeler içinde gelir (IMAP IDLE).' }).waitFor({ timeout: 20_000 });
    await okuma.getByText(/Son okunan posta/).waitFor();
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
    await okuma.scrollIntoViewIfNeeded();
    await screenshot(phone.page, 'panel-mailbox-reader-tr-phone');
    // The stored password is kept when the field is left empty: Enter in the user name saves again.
    await okuma.getByLabel('Kullanıcı adı').focus();
    await phone.page.keyboard.press('Enter');
    await phone.page.getByText('Posta kutusu artık okunuyor.').waitFor();
    await okuma.getByRole('button', { name: 'Denetle ve kaydet' }).focus();
    await phone.page.keyboard.press('Tab');
    assert.equal(await phone.page.evaluate(() => document.activeElement?.textContent), 'Okumayı durdur');
    await phone.page.keyboard.press('Enter');
    await phone.page.getByText('Posta kutusu artık okunmuyor.').waitFor();
    await waitUntil(async () => (await readingOf()).reading === null, 10_000, 'reading stopped');
    assert.deepEqual(errors, []);
    await phone.context.close();
  });
});
