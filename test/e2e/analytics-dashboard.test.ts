// The analytics dashboard and a conversation's visit in a real browser: figures that match what was
// sent to /a/e, the uPlot chart, the breakdown cards (tabs, filters, CSV), the realtime count, adding a website (and a
// refused domain), the visit card beside a widget conversation; English at phone size and Turkish
// at desktop and phone size, with axe.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { createChatChannel } from '../../src/channels/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe('analytics dashboard in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let conversationId: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    const channel = await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Shop chat',
      origins: [ORIGIN],
      allowAnonymous: true,
    });
    await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'shop.example', name: 'Shop', chatChannelId: channel.id });
    const send = async (ua: string, u: string, r: string | null = null) => {
      const res = await s.request('POST', '/a/e', {
        raw: JSON.stringify({ d: 'shop.example', u, r, w: 1280 }),
        headers: { 'content-type': 'text/plain', origin: ORIGIN, 'user-agent': ua },
      });
      assert.equal(res.headers.get('svc-analytics-dropped'), null);
    };
    await send(CHROME, 'https://shop.example/?utm_source=newsletter&utm_campaign=spring');
    await send(CHROME, 'https://shop.example/pricing');
    await send(IPHONE, 'https://shop.example/pricing', 'https://www.google.com/');
    await ingestionOf(s.app).writer.flush();
    const h = { origin: ORIGIN, 'user-agent': CHROME };
    const v = await s.request('POST', '/v1/widget/sessions', { body: { public_key: channel.public_key }, headers: h });
    const started = await s.request('POST', '/v1/widget/conversations', { token: v.body.token, body: { body: 'Do you ship to Rotterdam?' }, headers: h });
    conversationId = started.body.conversation.id;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  for (const [locale, sizes] of [
    ['en-US', [390]],
    ['tr-TR', [1280, 390]],
  ] as const) {
    test(`dashboard, websites and a conversation's visit (${locale})`, async () => {
      const tr = locale === 'tr-TR';
      await s.app.db
        .updateTable('people')
        .set({ locale: tr ? 'tr' : 'en' })
        .where('id', '=', seed.ownerId)
        .execute();
      const { context, page } = await browser.newPage({ viewport: { width: sizes[0], height: 900 }, locale });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      const totals = page.getByTestId('analytics-totals');
      const sources = page.getByRole('region', { name: tr ? 'En iyi kaynaklar' : 'Top sources' });
      for (const width of sizes) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${s.url}/analytics`);
        await page.getByRole('heading', { name: tr ? 'Analitik' : 'Analytics', level: 1 }).waitFor();
        // Websites are listed by domain: the other test's website may come first.
        await page.getByLabel(tr ? 'Web sitesi' : 'Website', { exact: true }).selectOption({ label: 'Shop (shop.example)' });
        await totals.waitFor();
        // Two visitors (Chrome and the iPhone), three pageviews, two visits (once the chosen website's figures came).
        await totals.locator('dd').first().filter({ hasText: /^2/ }).waitFor();
        const figures = await totals.locator('dd').allTextContents();
        assert.match(figures[0], /^2/, `visitors: ${figures[0]}`);
        assert.match(figures[1], /^3/, `pageviews: ${figures[1]}`);
        await page.locator('.report-chart canvas').first().waitFor();
        assert.match(
          (await page.getByTestId('analytics-realtime').textContent()) ?? '',
          tr ? /Son 5 dakikada 2 ziyaretçi/ : /2 visitors in the last 5 minutes/,
        );
        const pages = page.getByRole('region', { name: tr ? 'En çok görülen sayfalar' : 'Top pages' });
        await pages.getByRole('row', { name: /\/pricing\s*2/ }).waitFor();
        await sources.getByRole('row', { name: /newsletter\s*1/ }).waitFor();
        await sources.getByRole('row', { name: /google\.com\s*1/ }).waitFor();
        const devices = page.getByRole('region', { name: tr ? 'Cihazlar' : 'Devices' });
        await devices.getByRole('row', { name: tr ? /Telefon\s*1/ : /Phone\s*1/ }).waitFor();
        // The funnel by source: the newsletter visitor started the one conversation.
        const funnel = page.getByRole('region', { name: tr ? 'Konuşma hunisi' : 'Conversation funnel' });
        await funnel.getByRole('row', { name: /newsletter\s*1\s*0\s*1\s*0\s*0/ }).waitFor();
        const chartWidth = await page
          .locator('.report-chart canvas')
          .first()
          .evaluate((c) => c.getBoundingClientRect().width);
        assert.ok(chartWidth <= width, `chart ${chartWidth}px wide on a ${width}px screen`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
        await assertAccessible(page);
        await screenshot(page, `analytics-${locale}-${width}`);
      }

      // A card's tabs: one Tab stop, arrows between them; entry pages of the two visits.
      const pageTabs = page.getByRole('tablist', { name: tr ? 'Sayfalar' : 'Pages' });
      await pageTabs.getByRole('tab', { name: tr ? 'En çok görülen sayfalar' : 'Top pages' }).focus();
      await page.keyboard.press('ArrowRight');
      const entryTab = pageTabs.getByRole('tab', { name: tr ? 'Giriş sayfaları' : 'Entry pages' });
      assert.equal(await entryTab.getAttribute('aria-selected'), 'true');
      assert.equal(await entryTab.evaluate((el) => el === document.activeElement), true);
      const entries = page.getByRole('region', { name: tr ? 'Giriş sayfaları' : 'Entry pages' });
      await entries.getByRole('row', { name: /^\/\s*1$/ }).waitFor();
      await entries.getByRole('row', { name: /\/pricing\s*1/ }).waitFor();
      await page.keyboard.press('ArrowRight');
      await pageTabs
        .getByRole('tab', { name: tr ? 'Çıkış sayfaları' : 'Exit pages' })
        .and(page.locator('[aria-selected="true"]'))
        .waitFor();
      await page
        .getByRole('region', { name: tr ? 'Çıkış sayfaları' : 'Exit pages' })
        .getByRole('row', { name: /\/pricing\s*2/ })
        .waitFor();

      // Choosing a source filters the whole page (the funnel too); the chip removes the filter.
      const funnel = page.getByRole('region', { name: tr ? 'Konuşma hunisi' : 'Conversation funnel' });
      await funnel.getByRole('row', { name: /google\.com\s*1/ }).waitFor();
      await sources.getByRole('button', { name: 'newsletter' }).click();
      const chip = page.getByRole('region', { name: tr ? 'Filtreler' : 'Filters' }).getByText(tr ? 'En iyi kaynaklar: newsletter' : 'Top sources: newsletter');
      await chip.waitFor();
      await totals.locator('dd').first().filter({ hasText: /^1/ }).waitFor();
      assert.match((await totals.locator('dd').nth(1).textContent()) ?? '', /^2/, 'the newsletter visit’s two pageviews');
      // The funnel follows the filter: the newsletter row only.
      await funnel.getByRole('row', { name: /google\.com/ }).waitFor({ state: 'detached' });
      await funnel.getByRole('row', { name: /newsletter\s*1\s*0\s*1\s*0\s*0/ }).waitFor();
      await assertAccessible(page);
      await screenshot(page, `analytics-filtered-${locale}`);
      // The CSV of a card is what the card shows, filters included.
      const csvLink = page.getByRole('link', { name: tr ? 'CSV indir (En iyi kaynaklar)' : 'Export CSV (Top sources)' });
      const csv = await page.request.get(`${s.url}${await csvLink.getAttribute('href')}`);
      assert.equal(csv.status(), 200);
      assert.equal(await csv.text(), 'source,visitors,pageviews\r\nnewsletter,1,2\r\n');
      await page.getByRole('button', { name: tr ? 'En iyi kaynaklar: newsletter filtresini kaldır' : 'Remove the filter Top sources: newsletter' }).click();
      await chip.waitFor({ state: 'detached' });
      await totals.locator('dd').first().filter({ hasText: /^2/ }).waitFor();

      // Websites: a refused domain says why and adds nothing; a good one is listed with its snippet.
      const domain = tr ? 'blog-tr.example' : 'blog-en.example';
      await page.getByLabel(tr ? 'Alan adı' : 'Domain', { exact: true }).fill('http://localhost/x');
      await page.getByRole('button', { name: tr ? 'Web sitesi ekle' : 'Add website' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /not a domain/ })
        .waitFor();
      await page.getByLabel(tr ? 'Alan adı' : 'Domain', { exact: true }).fill(domain);
      await page.getByRole('button', { name: tr ? 'Web sitesi ekle' : 'Add website' }).click();
      await page.locator('.analytics-snippet', { hasText: `data-domain="${domain}"` }).waitFor();
      const listed = await s.request('GET', '/v1/analytics/properties', { token: seed.apiKey });
      const domains = listed.body.data.map((p: { domain: string }) => p.domain);
      assert.ok(domains.includes(domain), 'the website was added');
      assert.ok(!domains.some((d: string) => d.includes('localhost')), 'the refused domain was not');
      await assertAccessible(page);

      // The conversation the Chrome visitor started shows where they came from.
      await page.goto(`${s.url}/conversations/${conversationId}`);
      const card = page.getByRole('region', { name: tr ? 'Ziyaret' : 'Visit' });
      await page.getByRole('log').getByText('Do you ship to Rotterdam?').waitFor();
      // At phone size the details are one tap away.
      await page.getByRole('button', { name: tr ? 'Ayrıntılar' : 'Details', exact: true }).click();
      await card.waitFor();
      const text = (await card.textContent()) ?? '';
      assert.match(text, tr ? /Giriş sayfası\s*\// : /Entry page\s*\//);
      assert.match(text, /newsletter/);
      assert.match(text, /spring/);
      assert.match(text, tr ? /Masaüstü · Chrome · Windows/ : /Desktop · Chrome · Windows/);
      await card.getByText(tr ? 'O gün görülen sayfalar (2)' : 'Pages seen that day (2)').click();
      await card.getByText('/pricing').waitFor();
      await assertAccessible(page);
      await screenshot(page, `analytics-visit-${locale}`);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
