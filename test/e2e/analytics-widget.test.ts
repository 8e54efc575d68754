// Analytics through widget.js alone, end to end in Chromium: a shop page (http://shop.test:<port>,
// another origin than svc, strict CSP) loads only widget.js for a chat channel whose property counts
// the shop. The widget records the pageview, a single-page-app navigation, a custom event
// (svc('track', …)) and "Chat Opened"; the visitor then writes, and the conversation the team sees
// (API answer) carries the visit: entry page, campaign, pages seen. A page whose origin no property
// of the channel counts sends nothing.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { createChatChannel } from '../../src/channels/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('analytics through widget.js (no second script)', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let host: http.Server;
  let shop: string;
  let other: string;
  let key: string;
  let propertyId: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    host = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://host');
      if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
      const svc = new URL(s.url).origin;
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': `default-src 'none'; script-src ${svc} 'sha256-${TRACK_HASH}'; connect-src ${svc} ${svc.replace(/^http/, 'ws')}; style-src 'self'`,
      });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body><main><h1>The shop</h1><a id="spa" href="/pricing">Pricing</a></main>
<script>${TRACK_SCRIPT}</script>
<script src="${svc}/widget.js" data-key="${key}" async></script></body></html>`);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const port = (host.address() as AddressInfo).port;
    shop = `http://shop.test:${port}`;
    other = `http://other.test:${port}`;
    const channel = await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Chat',
      origins: [shop, other],
      allowAnonymous: true,
      askEmailOffline: false,
    });
    key = channel.public_key!;
    propertyId = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'shop.test', chatChannelId: channel.id })).id;
    browser = await launchBrowser({
      args: ['--host-resolver-rules=MAP shop.test 127.0.0.1, MAP other.test 127.0.0.1', '--disable-blink-features=AutomationControlled'],
    });
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

  test('pageviews, navigation, a custom event and Chat Opened through widget.js; the conversation carries the visit', async () => {
    const { context, page } = await browser.newPage({ userAgent: CHROME });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => (m.type() === 'error' || /svc widget|Content Security Policy/.test(m.text())) && problems.push(m.text()));
    await page.goto(`${shop}/?utm_source=newsletter&utm_campaign=launch`);
    let rows = await stored(1);
    assert.equal(rows[0].name, 'pageview');
    assert.equal(rows[0].path, '/');
    assert.equal(rows[0].utm_campaign, 'launch');

    await page.click('#spa');
    rows = await stored(3);
    assert.deepEqual(
      rows.map((r) => [r.name, r.path]),
      [
        ['pageview', '/'],
        ['pageview', '/pricing'],
        ['Signup', '/pricing'],
      ],
    );
    assert.deepEqual(JSON.parse(rows[2].props!), { plan: 'pro' });

    const launcher = page.locator('svc-chat').getByRole('button', { name: 'Open chat' });
    await launcher.click();
    rows = await stored(4);
    assert.equal(rows[3].name, 'Chat Opened');
    const dialog = page.getByRole('dialog');
    const box = dialog.getByLabel('Write a message');
    await box.fill('Is there a yearly plan?');
    await box.press('Enter');
    await dialog.getByText('Is there a yearly plan?').waitFor();

    let conversationId: string | undefined;
    for (let i = 0; i < 100 && !conversationId; i++) {
      conversationId = (await s.app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).executeTakeFirst())?.id;
      if (!conversationId) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(conversationId, 'the conversation was started');
    const answer = await s.request('GET', `/v1/conversations/${conversationId}`, { token: seed.apiKey });
    const visit = answer.body.visit;
    assert.ok(visit, 'the conversation carries its visit');
    assert.equal(visit.entry_page, '/');
    assert.equal(visit.source, 'newsletter');
    assert.equal(visit.utm.campaign, 'launch');
    assert.equal(visit.browser, 'Chrome');
    assert.equal(visit.device, 'desktop');
    assert.deepEqual(
      visit.pages.map((p: { path: string }) => p.path),
      ['/', '/pricing'],
    );
    rows = await stored(5);
    assert.equal(rows[4].name, 'Conversation Started');
    assert.equal(await page.evaluate(() => document.cookie), '', 'no cookie');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('on a page no property of the channel counts, widget.js sends nothing', async () => {
    const before = (await stored(0)).length;
    const { context, page } = await browser.newPage({ userAgent: CHROME });
    const beacons: string[] = [];
    page.on('request', (r) => r.url().endsWith('/a/e') && beacons.push(r.url()));
    const config = page.waitForResponse((r) => r.url().includes('/v1/widget/config'));
    await page.goto(`${other}/`);
    assert.equal((await (await config).json()).analytics, null);
    await page.locator('svc-chat').getByRole('button', { name: 'Open chat' }).waitFor();
    assert.deepEqual(beacons, []);
    assert.equal((await stored(0)).length, before);
    await context.close();
  });
});

// The page's own script: a single-page-app link and a custom event queued through svc(…) before
// widget.js loads (allowed by the page's CSP through its hash).
const TRACK_SCRIPT =
  "window.svc=window.svc||function(){(svc.q=svc.q||[]).push(arguments)};document.getElementById('spa').onclick=function(e){e.preventDefault();history.pushState({},'','/pricing');svc('track','Signup',{plan:'pro'})};";
const TRACK_HASH = createHash('sha256').update(TRACK_SCRIPT).digest('base64');
