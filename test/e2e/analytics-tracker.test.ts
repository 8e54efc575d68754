// The tracker (/a.js) in Chromium on a page of another origin (http://shop.test:<port>, mapped to
// 127.0.0.1): pageviews, single-page-app navigation, custom events (also those queued before the
// script loaded), nothing stored in the browser, and silence on localhost and under automation.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { systemClock } from '../../src/platform/clock.js';
import { type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('analytics tracker in a browser', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let host: http.Server;
  let shop: string;
  let local: string;
  let propertyId: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock });
    seed = await seedWorkspace(s.app);
    host = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://host');
      if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html lang="en"><head><title>Shop</title>
<script>window.svca=window.svca||function(){(svca.q=svca.q||[]).push(arguments)};svca('Queued',{early:true});</script>
<script defer src="${s.url}/a.js" data-domain="shop.test"></script></head>
<body><a id="spa" href="/pricing" onclick="event.preventDefault();history.pushState({},'','/pricing?utm_campaign=launch&session=abc')">Pricing</a></body></html>`);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const port = (host.address() as AddressInfo).port;
    shop = `http://shop.test:${port}`;
    local = `http://127.0.0.1:${port}`;
    propertyId = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'shop.test' })).id;
    // Without this flag navigator.webdriver is true and the tracker (rightly) stays silent.
    browser = await launchBrowser({ args: ['--host-resolver-rules=MAP shop.test 127.0.0.1', '--disable-blink-features=AutomationControlled'] });
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await new Promise((r) => host?.close(r));
  });

  async function stored(count: number) {
    for (let i = 0; i < 200; i++) {
      await ingestionOf(s.app).writer.flush();
      const rows = await s.app.db.selectFrom('analytics_events').selectAll().where('property_id', '=', propertyId).orderBy('at').orderBy('id').execute();
      if (rows.length >= count) return rows;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`expected ${count} analytics events`);
  }

  function beacons(page: Page): string[] {
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/a/e')) sent.push(r.postData() ?? '');
    });
    return sent;
  }

  test('pageviews, SPA navigation and custom events reach the server; nothing is stored in the browser', async () => {
    const { context, page } = await browser.newPage({ userAgent: CHROME });
    await page.goto(`${shop}/`);
    let rows = await stored(2);
    assert.deepEqual(
      rows.map((r) => [r.name, r.path]).sort(),
      [
        ['Queued', '/'],
        ['pageview', '/'],
      ].sort(),
    );
    assert.deepEqual(JSON.parse(rows.find((r) => r.name === 'Queued')!.props!), { early: true });
    await page.click('#spa');
    rows = await stored(3);
    assert.deepEqual([rows[2].name, rows[2].path, rows[2].utm_campaign], ['pageview', '/pricing', 'launch']);
    await page.goBack();
    await page.waitForURL(`${shop}/`);
    rows = await stored(4);
    assert.deepEqual([rows[3].name, rows[3].path], ['pageview', '/']);
    await page.evaluate(() => (window as unknown as { svca(n: string, p: object): void }).svca('Signup', { plan: 'pro' }));
    rows = await stored(5);
    assert.deepEqual([rows[4].name, JSON.parse(rows[4].props!)], ['Signup', { plan: 'pro' }]);
    assert.equal(new Set(rows.map((r) => r.visit_id)).size, 1, 'one visit');
    assert.equal(rows[0].browser, 'Chrome');

    assert.deepEqual(await context.cookies(), []);
    assert.deepEqual(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]), [0, 0, '']);
    await context.close();
  });

  test('silent on localhost and under automation (navigator.webdriver)', async () => {
    const { context, page } = await browser.newPage({ userAgent: CHROME });
    const sent = beacons(page);
    await page.goto(`${local}/`);
    await page.evaluate(() => (window as unknown as { svca(n: string): void }).svca('Local'));
    await page.waitForFunction(() => typeof (window as unknown as { svca?: { q?: unknown } }).svca === 'function' && !('q' in (window as any).svca));
    await context.close();

    const automated = await browser.newPage({ userAgent: CHROME });
    await automated.page.addInitScript(() => Object.defineProperty(navigator, 'webdriver', { get: () => true }));
    const sentAutomated = beacons(automated.page);
    await automated.page.goto(`${shop}/`);
    await automated.page.waitForFunction(() => !('q' in (window as any).svca));
    await automated.page.evaluate(() => (window as unknown as { svca(n: string): void }).svca('Robot'));
    await automated.context.close();
    assert.deepEqual(sent, []);
    assert.deepEqual(sentAutomated, []);
  });
});
