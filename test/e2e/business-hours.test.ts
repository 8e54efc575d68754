// The inbox's business hours card in a real browser at phone size, in English and Turkish: switch
// from always open to a schedule, add a lunch break and a holiday, save, see it stored; an
// overlapping interval is refused with the server's reason and changes nothing. The out-of-office
// reply card says it is held while the inbox has no hours, and saves its switch and text once it
// has. axe on the page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEXT = {
  en: {
    title: 'Business hours',
    scheduled: 'Open on a schedule',
    monday: 'Monday',
    add: 'Add hours',
    addDay: 'Add a day',
    save: 'Save',
    saved: 'Saved',
    away: 'Out-of-office reply',
    awayOn: 'Send the out-of-office reply',
    awayHeld: 'no business hours',
    english: 'Text in English',
  },
  tr: {
    title: 'Çalışma saatleri',
    scheduled: 'Bir programa göre açık',
    monday: 'Pazartesi',
    add: 'Saat ekle',
    addDay: 'Gün ekle',
    save: 'Kaydet',
    saved: 'Kaydedildi',
    away: 'Mesai dışı yanıtı',
    awayOn: 'Mesai dışı yanıtını gönder',
    awayHeld: 'çalışma saatleri yok',
    english: 'İngilizce metin',
  },
} as const;

describe('business hours in the panel', { skip: browserSkipReason() }, () => {
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

  for (const lang of ['en', 'tr'] as const) {
    test(`${lang}: a schedule with a lunch break and a holiday, from a phone; an overlap is refused`, async () => {
      const x = TEXT[lang];
      await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.ownerToken, body: { weekly: null, exceptions: [] } });
      await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/away-reply`, { token: seed.ownerToken, body: { enabled: true } });
      // The panel speaks the member's language (people.locale).
      await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
      const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
      const card = page.getByRole('region', { name: x.title });
      await card.waitFor();
      // Switched on, but the inbox is never closed: the away card says why nothing goes out.
      const away = page.getByRole('region', { name: x.away, exact: true });
      await away.getByRole('status').filter({ hasText: x.awayHeld }).waitFor();
      await card.getByLabel(x.scheduled).check();
      const monday = card.getByRole('group', { name: x.monday, exact: true });
      await monday.getByRole('button', { name: x.add }).click();
      // Monday: 09:00–17:00 (the default) then 17:00–18:00 added; make it 09:00–12:00 and 13:00–17:00.
      const times = monday.locator('input[type=time]');
      await times.nth(1).fill('12:00');
      await times.nth(2).fill('13:00');
      await times.nth(3).fill('17:00');
      await card.getByRole('button', { name: x.addDay }).click();
      await card.locator('input[type=date]').fill('2026-12-25');
      await assertAccessible(page);
      await card.getByRole('button', { name: x.save, exact: true }).click();
      await page.getByText(x.saved, { exact: true }).first().waitFor();
      const stored = (await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey })).body;
      assert.deepEqual(stored.weekly.mon, [
        { start: '09:00', end: '12:00' },
        { start: '13:00', end: '17:00' },
      ]);
      assert.equal(stored.weekly.sat, undefined);
      assert.deepEqual(stored.exceptions, [{ date: '2026-12-25', intervals: [] }]);
      // With hours saved, the away card no longer says the inbox has no hours (this inbox has no SMTP
      // server, which it says next); its text is saved with its own button.
      await away.getByRole('status').filter({ hasText: 'SMTP' }).waitFor();
      assert.equal(await away.getByRole('status').filter({ hasText: x.awayHeld }).count(), 0);
      await away.getByLabel(x.english).fill(`Closed now; back {next_opening} (${lang}).`);
      await away.getByRole('button', { name: x.save, exact: true }).click();
      await waitUntil(
        async () =>
          (await s.request('GET', `/v1/inboxes/${seed.inboxId}/away-reply`, { token: seed.apiKey })).body.text.en ===
          `Closed now; back {next_opening} (${lang}).`,
        30_000,
        'the away text saved',
      );
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
      await screenshot(page, `panel-business-hours-${lang}-phone`);

      // An overlap: refused with the field, nothing stored.
      await card.getByRole('group', { name: x.monday, exact: true }).locator('input[type=time]').nth(2).fill('11:00');
      await card.getByRole('button', { name: x.save, exact: true }).click();
      await card.getByRole('alert').filter({ hasText: 'weekly.mon.1' }).waitFor();
      assert.deepEqual((await s.request('GET', `/v1/inboxes/${seed.inboxId}/hours`, { token: seed.apiKey })).body.weekly.mon, stored.weekly.mon);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
