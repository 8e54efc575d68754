// Snooze in a real browser at phone size, in English and Turkish, in the member's time zone
// (Europe/Istanbul): the Snooze dialog's quick choice "tomorrow 09:00" snoozes until 09:00 there,
// the header and the timeline say so, the conversation leaves the open list for the Snoozed view,
// and the customer's reply wakes it live ("Woke up: the customer answered"). axe on each page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEXT = {
  en: {
    snooze: 'Snooze',
    tomorrow: 'Tomorrow',
    badge: /Snoozed until/,
    line: /Snoozed until .*09:00/,
    view: 'Snoozed',
    open: 'Open',
    woke: 'Woke up: the customer answered',
  },
  tr: {
    snooze: 'Ertele',
    tomorrow: 'Yarın',
    badge: /zamanına kadar ertelendi/,
    line: /09:00 zamanına kadar ertelendi/,
    view: 'Ertelenenler',
    open: 'Açık',
    woke: 'Geri döndü: müşteri yanıt verdi',
  },
} as const;

/** Tomorrow 09:00 in Istanbul (UTC+3 all year) as an ISO instant. */
function tomorrowNineIstanbul(now = Date.now()): string {
  const here = new Date(now + 3 * 3600_000);
  return new Date(Date.UTC(here.getUTCFullYear(), here.getUTCMonth(), here.getUTCDate() + 1, 9 - 3, 0)).toISOString();
}

describe('snooze in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed)).address!;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  for (const lang of ['en', 'tr'] as const) {
    test(`${lang}: snooze until tomorrow 09:00 from the phone; the Snoozed view; the customer's reply wakes it`, async () => {
      const x = TEXT[lang];
      const messageId = `<snooze-${lang}-${Date.now()}@customer.example>`;
      const mail = await deliverMail(s, address, { From: 'Ada Lovelace <ada@customer.example>', Subject: `Printer ${lang}`, 'Message-ID': messageId });
      const id = mail.conversation_id;
      // The panel speaks the member's language (people.locale).
      await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
      const { context, page } = await browser.newPage({
        viewport: { width: 390, height: 844 },
        locale: lang === 'en' ? 'en-GB' : 'tr-TR',
        timezoneId: 'Europe/Istanbul',
      });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

      await page.goto(`${s.url}/conversations/${id}`);
      await page.getByRole('button', { name: x.snooze, exact: true }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await assertAccessible(page);
      await screenshot(page, `panel-snooze-dialog-${lang}-phone`);
      await dialog.getByRole('button', { name: new RegExp(`^${x.tomorrow}`) }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.locator('.snooze-badge').filter({ hasText: x.badge }).waitFor();

      const stored = (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body;
      assert.equal(stored.snoozed_until, tomorrowNineIstanbul(Date.parse(stored.snoozed_at)), 'tomorrow 09:00 in the member’s zone');
      await page.getByText(x.line).first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);

      // The open list leaves it out; the Snoozed view shows it with its wake time.
      await page.goto(`${s.url}/conversations`);
      await page.getByRole('button', { name: x.open, exact: true }).waitFor();
      await page.getByRole('button', { name: x.view, exact: true }).click();
      const row = page.getByRole('link', { name: new RegExp(`Printer ${lang}`) });
      await row.waitFor();
      assert.match((await row.locator('.snooze-when').textContent()) ?? '', /09:00/);
      await assertAccessible(page);
      await screenshot(page, `panel-snoozed-view-${lang}-phone`);
      await page.getByRole('button', { name: x.open, exact: true }).click();
      await page.waitForURL((u) => !u.search.includes('snoozed'));
      await page.locator('.list-scroll').waitFor();
      await page.waitForFunction((subject) => !document.querySelector('.list-scroll')?.textContent?.includes(subject), `Printer ${lang}`);

      // The customer answers: the conversation wakes, live, in the open thread.
      await page.goto(`${s.url}/conversations/${id}`);
      await page.locator('.snooze-badge').waitFor();
      await deliverMail(s, address, { From: 'Ada Lovelace <ada@customer.example>', Subject: `Re: Printer ${lang}`, 'In-Reply-To': messageId });
      await page.getByText(x.woke).waitFor({ timeout: 20_000 });
      await page.locator('.snooze-badge').waitFor({ state: 'detached' });
      await assertAccessible(page);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
