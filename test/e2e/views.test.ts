// Saved views and the installable panel in a real browser, one session: in English on a desktop, a
// view built from the list's filter (label) plus a condition in the dialog (Urgent), its count in the
// sidebar, live when another conversation starts matching, and moved above another with Alt+↑ (kept
// on the server); in Turkish on a phone, the same sidebar through the menu and the view renamed in
// its dialog. Then the web app manifest (reachable, its type, its icons) and chromium's own verdict:
// Page.getInstallabilityErrors answers no errors. axe on each page; screenshots.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, CHROMIUM_FLAGS, CHROMIUM_PATH, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('saved views and the installable panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  const ids: string[] = [];

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    const field = await s.request('POST', '/v1/custom-fields', {
      token: seed.ownerToken,
      body: { object: 'conversation', key: 'plan', label: 'Plan', type: 'single_select', options: ['Basic', 'Pro'] },
    });
    assert.equal(field.status, 201, JSON.stringify(field.body));
    const address = (await seedEmailChannel(s.app, seed)).address!;
    for (const [subject, labels, priority] of [
      ['Invoice twice', ['billing'], 'urgent'],
      ['Refund please', ['billing'], null],
      ['Printer broken', [], 'urgent'],
    ] as const) {
      const id = (await deliverMail(s, address, { Subject: subject, From: `${subject.split(' ')[0]}@customer.test` })).conversation_id;
      // The billing ones are on the Pro plan (a custom field the view also asks for).
      const custom_fields = labels.length ? { plan: 'Pro' } : {};
      await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.ownerToken, body: { labels, priority, custom_fields } });
      ids.push(id);
    }
    await s.request('POST', '/v1/views', { token: seed.ownerToken, body: { name: 'Waiting on us', filters: { status: ['pending'] } } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('a view from the filters, its live count, keyboard reordering (en, desktop); renamed on a phone (tr); installable', async () => {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-GB' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations?label=billing`);
    const list = page.locator('.list-scroll');
    await list.getByText('Refund please').waitFor();
    await page.getByRole('button', { name: 'Save as view' }).click();
    const dialog = page.getByRole('dialog', { name: 'Save as view' });
    await dialog.getByLabel('Name').fill('Urgent billing');
    assert.equal(await dialog.getByLabel('Labels (comma-separated)').inputValue(), 'billing', 'the list’s label comes along');
    assert.equal(await dialog.getByRole('checkbox', { name: 'Open' }).isChecked(), true, 'and its status');
    await dialog.getByRole('checkbox', { name: 'Urgent' }).check();
    await dialog.getByLabel('Custom field').selectOption({ label: 'Plan' });
    await dialog.getByLabel('Value').selectOption({ label: 'Pro' });
    await assertAccessible(page);
    await dialog.getByRole('button', { name: 'Save view' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.waitForURL((u) => u.searchParams.has('saved'));
    await page.getByRole('heading', { name: 'Urgent billing' }).waitFor();
    await list.getByText('Invoice twice').waitFor();
    assert.equal(await list.getByText('Refund please').count(), 0);

    const nav = page.getByRole('list', { name: 'Saved views' });
    const link = nav.getByRole('link', { name: /^Urgent billing/ });
    await link.locator('.count[data-count="1"]').waitFor();
    const stored = (await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data;
    assert.deepEqual(
      stored.map((v: any) => v.name),
      ['Waiting on us', 'Urgent billing'],
    );
    assert.deepEqual(stored[1].filters, {
      status: ['open'],
      label: { all: ['billing'] },
      priority: ['urgent'],
      custom_fields: [{ key: 'plan', value: 'Pro' }],
    });

    // Another conversation starts matching: the count follows the realtime event.
    await s.request('PATCH', `/v1/conversations/${ids[1]}`, { token: seed.ownerToken, body: { priority: 'urgent' } });
    await link.locator('.count[data-count="2"]').waitFor();
    await screenshot(page, 'panel-saved-views-en-desktop');

    // Alt+↑ moves it above the other; the focus stays on it and the order is kept.
    await link.focus();
    await page.keyboard.press('Alt+ArrowUp');
    await waitUntil(async () => (await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data[0].name === 'Urgent billing', 10_000, 'moved');
    assert.deepEqual(await nav.getByRole('link').evaluateAll((as) => as.map((a) => a.querySelector('.saved-view-name')?.textContent)), [
      'Urgent billing',
      'Waiting on us',
    ]);
    assert.equal(await page.evaluate(() => document.activeElement?.querySelector('.saved-view-name')?.textContent), 'Urgent billing');
    await assertAccessible(page);
    assert.deepEqual(errors, []);
    await context.close();

    // Turkish, on a phone: the menu holds the views; the pencil opens the dialog.
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'tr-TR' });
    const phoneErrors: string[] = [];
    phone.page.on('pageerror', (e) => phoneErrors.push(String(e)));
    await phone.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await phone.page.goto(`${s.url}/conversations`);
    await phone.page.getByRole('button', { name: 'Menü' }).first().click();
    const trNav = phone.page.getByRole('list', { name: 'Kayıtlı görünümler' });
    await trNav
      .getByRole('link', { name: /^Urgent billing/ })
      .locator('.count[data-count="2"]')
      .waitFor();
    await trNav.getByRole('button', { name: 'Urgent billing görünümünü düzenle' }).click();
    const trDialog = phone.page.getByRole('dialog', { name: 'Görünümü düzenle' });
    await trDialog.getByLabel('Ad').fill('Acil faturalar');
    await screenshot(phone.page, 'panel-saved-view-dialog-tr-phone');
    await assertAccessible(phone.page);
    await trDialog.getByRole('button', { name: 'Görünümü kaydet' }).click();
    await trDialog.waitFor({ state: 'detached' });
    await trNav.getByRole('link', { name: /^Acil faturalar/ }).waitFor();
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);

    // Installable: the manifest is served as one, its icons load, and chromium finds nothing missing.
    const manifest = await fetch(`${s.url}/manifest.webmanifest`);
    assert.equal(manifest.status, 200);
    assert.match(manifest.headers.get('content-type') ?? '', /^application\/manifest\+json/);
    const m = await manifest.json();
    assert.equal(m.display, 'standalone');
    assert.equal(m.start_url, '/conversations');
    for (const icon of m.icons) {
      const r = await fetch(new URL(icon.src, s.url));
      assert.equal(r.status, 200, icon.src);
      assert.equal(r.headers.get('content-type'), 'image/png');
    }
    assert.ok(m.icons.some((i: any) => i.purpose === 'maskable' && i.sizes === '512x512'));
    assert.deepEqual(phoneErrors, []);
    await phone.context.close();

    // Chromium does not offer installing from an incognito context (the test contexts are), so
    // its verdict is asked of a profile on disk.
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-install-'));
    const persistent = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS });
    try {
      await persistent.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      const page = persistent.pages()[0] ?? (await persistent.newPage());
      await page.goto(`${s.url}/conversations`);
      await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
      const cdp = await persistent.newCDPSession(page);
      const manifestSeen = (await cdp.send('Page.getAppManifest')) as { url: string; errors: unknown[] };
      assert.equal(manifestSeen.url, `${s.url}/manifest.webmanifest`);
      assert.deepEqual(manifestSeen.errors, []);
      const installErrors = ((await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: unknown[] }).installabilityErrors;
      assert.deepEqual(installErrors, []);
    } finally {
      await persistent.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  });
});
