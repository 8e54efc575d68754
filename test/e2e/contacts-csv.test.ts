// The contacts page's CSV import (file, preview with column mapping, progress, per-row errors) and
// export in a real browser, in English and Turkish, by keyboard, and at phone width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('contacts CSV in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;

  before(async () => {
    s = await startTestServer({ clock: systemClock });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('import with mapping, export, en and tr, keyboard, phone', async () => {
    for (const [locale, width] of [
      ['en-US', 1280],
      ['tr-TR', 390],
    ] as const) {
      const tr = locale === 'tr-TR';
      await s.app.db
        .updateTable('people')
        .set({ locale: tr ? 'tr' : 'en' })
        .where('id', '=', seed.ownerId)
        .execute();
      const { context, page } = await browser.newPage({ viewport: { width, height: tr ? 844 : 800 }, locale });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/contacts`);
      const main = page.locator('main');
      await main.getByRole('button', { name: tr ? 'CSV içe aktar' : 'Import CSV' }).click();
      const dialog = page.getByRole('dialog');
      const csv = `Full name,Mail,Plan\r\n${tr ? 'Ayşe' : 'Ada'},${tr ? 'ayse' : 'ada'}@example.com,pro\r\nBroken,not-an-address,free\r\n`;
      await dialog.locator('#import-file').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await dialog.getByText(tr ? '2 satır bulundu' : '2 rows found').waitFor();
      // The preview shows the first rows; the mapping was guessed from the header and is changed by keyboard.
      await dialog.getByRole('cell', { name: 'not-an-address' }).waitFor();
      const plan = dialog.getByLabel('Plan');
      await plan.focus();
      await page.keyboard.press('Home');
      assert.equal(await plan.inputValue(), 'ignore');
      await plan.selectOption('attribute');
      await assertAccessible(page);
      await screenshot(page, `contacts-import-${tr ? 'tr-phone' : 'en'}`);
      await dialog.getByRole('button', { name: tr ? '2 satırı içe aktar' : 'Import 2 rows' }).click();
      await dialog.getByText(tr ? 'İçe aktarma bitti' : 'Import finished').waitFor({ timeout: 20_000 });
      await dialog.getByText(tr ? 'Satır 3: not an e-mail address: "not-an-address"' : 'Row 3: not an e-mail address: "not-an-address"').waitFor();
      assert.equal(await dialog.locator('progress').getAttribute('value'), '100');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await main.getByRole('link', { name: tr ? 'Ayşe' : 'Ada' }).waitFor();
      // No horizontal scrolling at phone width.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1));

      const exportLink = main.getByRole('link', { name: tr ? 'CSV olarak dışa aktar' : 'Export CSV' });
      const href = (await exportLink.getAttribute('href'))!;
      const text = await page.evaluate(async (u) => (await fetch(u)).text(), href);
      assert.match(text, new RegExp(`${tr ? 'ayse' : 'ada'}@example\\.com`));
      assert.match(text.split('\r\n')[0], /attr:Plan/);
      assert.deepEqual(errors, []);
      await context.close();
    }
  });
});
