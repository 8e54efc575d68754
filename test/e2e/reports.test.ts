// The reports page and the inbox's greeting and rating settings in a real browser: the charts are
// drawn by uPlot (canvas) with their figures as tables, the numbers match the API, the inbox page
// saves the greeting, a phone-sized window works, and axe finds no serious violations in English
// and Turkish.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('reports page in the panel', { skip: browserSkipReason() }, () => {
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    // Some activity today: two conversations, a reply, a close.
    const ids: string[] = [];
    for (const from of ['ada@cust.example', 'bob@cust.example']) {
      const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
        raw: rawMail({ To: address, From: from }),
        token: INGRESS_SECRET,
      });
      ids.push(r.body.data[0].conversation_id);
    }
    await s.request('POST', `/v1/conversations/${ids[0]}/messages`, { token: seed.ownerToken, body: { body: 'On it.' } });
    await s.request('PATCH', `/v1/conversations/${ids[0]}`, { token: seed.ownerToken, body: { status: 'closed' } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await sink?.close();
  });

  for (const locale of ['en-US', 'tr-TR'] as const) {
    test(`reports and inbox settings (${locale})`, async () => {
      const tr = locale === 'tr-TR';
      await s.app.db
        .updateTable('people')
        .set({ locale: tr ? 'tr' : 'en' })
        .where('id', '=', seed.ownerId)
        .execute();
      // Time zones on both sides of UTC: the report's days are UTC days wherever the browser is.
      const timezoneId = tr ? 'Europe/Istanbul' : 'America/Los_Angeles';
      const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale, timezoneId });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/conversations`);
      await page.getByRole('link', { name: tr ? 'Raporlar' : 'Reports' }).click();
      await page.getByRole('heading', { name: tr ? 'Raporlar' : 'Reports', level: 1 }).waitFor();
      // Three uPlot charts, each with a canvas, and the totals.
      await page.locator('.report-chart canvas').nth(2).waitFor();
      assert.equal(await page.locator('.report-chart .uplot').count(), 3);
      const totals = page.getByRole('definition');
      assert.ok((await totals.allTextContents()).includes('2'), 'two conversations opened');
      // The table under a chart has today's figures.
      await page
        .getByText(tr ? 'Tablo olarak göster' : 'Show as a table')
        .first()
        .click();
      // Days in the page's language, UTC days as the report counts them.
      const today = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date());
      const row = page.getByRole('row', { name: new RegExp(today) }).first();
      assert.match((await row.textContent()) ?? '', new RegExp(`${today}\\s*2\\s*1\\s*1`));
      // The chart's own words are translated too: its day axis and legend.
      assert.equal(await page.locator('.report-chart .u-legend').first().getByText('Time').count(), 0);
      await page
        .locator('.report-chart .u-legend')
        .first()
        .getByText(tr ? 'Gün' : 'Day')
        .waitFor();
      await page.getByRole('heading', { name: tr ? 'Kullanım' : 'Usage' }).waitFor();
      await assertAccessible(page);
      await screenshot(page, `reports-${locale}`);

      // Phone-sized: the charts fit the width.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(200);
      const width = await page
        .locator('.report-chart canvas')
        .first()
        .evaluate((c) => c.getBoundingClientRect().width);
      assert.ok(width <= 390, `chart ${width}px wide on a 390px screen`);
      await assertAccessible(page);

      // The inbox page: greeting and ratings.
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
      await page.getByRole('heading', { name: tr ? 'Karşılama mesajı' : 'Greeting' }).waitFor();
      // The out-of-office card has texts with the same labels: the greeting's own region.
      const greeting = page.getByRole('region', { name: tr ? 'Karşılama mesajı' : 'Greeting' });
      await greeting.getByLabel(tr ? 'Karşılama mesajını gönder' : 'Send the greeting').check();
      await greeting.getByLabel(tr ? 'İngilizce metin' : 'Text in English').fill(`Hello from ${locale}`);
      await greeting.getByRole('button', { name: tr ? 'Kaydet' : 'Save' }).click();
      await page.getByLabel(tr ? 'Değerlendirme iste' : 'Ask for a rating').check();
      await assertAccessible(page);
      for (let i = 0; i < 50; i++) {
        const g = await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey });
        const r = await s.request('GET', `/v1/inboxes/${seed.inboxId}/ratings`, { token: seed.apiKey });
        if (g.body.text.en === `Hello from ${locale}` && r.body.enabled) break;
        await page.waitForTimeout(100);
      }
      assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey })).body.enabled, true);
      assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey })).body.text.en, `Hello from ${locale}`);
      assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/ratings`, { token: seed.apiKey })).body.enabled, true);
      await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { token: seed.apiKey, body: { enabled: false } });
      await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: false } });
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
