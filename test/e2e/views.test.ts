// Saved views and the installable panel in a real browser, one session: in English on a desktop, a
// view built from the list's filter (label) plus conditions added in the dialog's builder with the
// keyboard (Urgent, two custom fields, channel, a created range; an unfinished row refused and
// removed), its plain-words summary, its count in the sidebar, live when another conversation starts
// matching, and moved above another with Alt+↑ (kept on the server); in Turkish on a phone, the same
// sidebar through the menu and a view made through the API with every condition the filter takes,
// shown row by row in its dialog and kept unchanged when renamed. Then the web app manifest
// (reachable, its type, its icons) and chromium's own verdict: Page.getInstallabilityErrors answers
// no errors. axe on each page; screenshots.
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

/** Every condition a view's filter takes, as the API is given them (the panel must show and keep each). */
const EVERY_CONDITION = (inboxId: string) => ({
  status: ['open', 'pending'],
  inbox_id: [inboxId],
  channel_kind: ['email', 'chat'],
  assignee_id: ['me', 'none'],
  team_id: ['mine', 'none'],
  label: { any: ['billing', 'vip'], none: ['spam-ish'] },
  priority: ['urgent', 'none'],
  snoozed: false,
  sla: 'none',
  imported: false,
  spam: false,
  created: { after: '2026-01-01T00:00:00.000Z', before: '2030-01-01T10:30:00.000Z' },
  last_activity: { after: '2026-01-02T00:00:00+03:00' },
  contact_attribute: { key: 'plan', op: 'eq', value: 'gold' },
  text: 'invoice',
  custom_fields: [
    { key: 'plan', value: 'Pro' },
    { key: 'region', value: 'EU' },
  ],
});

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
    const region = await s.request('POST', '/v1/custom-fields', {
      token: seed.ownerToken,
      body: { object: 'conversation', key: 'region', label: 'Region', type: 'single_select', options: ['EU', 'US'] },
    });
    assert.equal(region.status, 201, JSON.stringify(region.body));
    const address = (await seedEmailChannel(s.app, seed)).address!;
    for (const [subject, labels, priority] of [
      ['Invoice twice', ['billing'], 'urgent'],
      ['Refund please', ['billing'], null],
      ['Printer broken', [], 'urgent'],
    ] as const) {
      const id = (await deliverMail(s, address, { Subject: subject, From: `${subject.split(' ')[0]}@customer.test` })).conversation_id;
      // The billing ones are on the Pro plan in the EU (custom fields the view also asks for).
      const custom_fields = labels.length ? { plan: 'Pro', region: 'EU' } : {};
      await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.ownerToken, body: { labels, priority, custom_fields } });
      ids.push(id);
    }
    await s.request('POST', '/v1/views', { token: seed.ownerToken, body: { name: 'Waiting on us', filters: { status: ['pending'] } } });
    const everything = await s.request('POST', '/v1/views', { token: seed.ownerToken, body: { name: 'Everything', filters: EVERY_CONDITION(seed.inboxId) } });
    assert.equal(everything.status, 201, JSON.stringify(everything.body));
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
    const summary = dialog.getByRole('region', { name: 'Shows conversations where' });
    const condition = (n: number) => dialog.getByRole('group', { name: `Condition ${n}`, exact: true });
    // The list's status and label come along as the first rows.
    assert.deepEqual(await summary.getByRole('listitem').allTextContents(), ['Status is Open', 'Has all the labels billing']);
    assert.equal(await condition(1).getByRole('checkbox', { name: 'Open' }).isChecked(), true);
    assert.equal(await condition(2).getByLabel('Labels').inputValue(), 'billing');
    assert.equal(await condition(2).getByLabel('Match').inputValue(), 'all');

    // Keyboard: Add condition puts the focus on the new row's condition select; Space ticks a choice.
    const add = dialog.getByRole('button', { name: '+ Add condition' });
    const addRow = async (n: number, kind: string) => {
      await add.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction((id) => document.activeElement?.id === id, `vc-${n - 1}-kind`);
      await condition(n).getByLabel('Condition', { exact: true }).selectOption({ label: kind });
    };
    await addRow(3, 'Priority');
    await condition(3).getByRole('checkbox', { name: 'Urgent' }).focus();
    await page.keyboard.press('Space');
    await addRow(4, 'Custom field');
    await condition(4).getByLabel('Field').selectOption({ label: 'Plan' });
    await condition(4).getByLabel('Value').selectOption({ label: 'Pro' });
    await addRow(5, 'Custom field');
    await condition(5).getByLabel('Field').selectOption({ label: 'Region' });
    await condition(5).getByLabel('Value').selectOption({ label: 'EU' });
    await addRow(6, 'Channel');
    await condition(6).getByRole('checkbox', { name: 'E-mail' }).check();
    await addRow(7, 'Created');
    const since = new Date(Date.now() - 3 * 86_400_000);
    const sinceDay = `${since.getFullYear()}-${String(since.getMonth() + 1).padStart(2, '0')}-${String(since.getDate()).padStart(2, '0')}`;
    await condition(7).getByLabel('From').fill(sinceDay);
    // A row left without a value is refused by name, with the focus on it; ✕ removes it.
    await addRow(8, 'Inbox');
    await dialog.getByRole('button', { name: 'Save view' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Condition 8 is not finished' }).waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'vc-7-kind');
    await condition(8).getByRole('button', { name: 'Remove condition 8' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'vc-6-kind');
    assert.equal(await condition(8).count(), 0);
    const said = await summary.getByRole('listitem').allTextContents();
    assert.deepEqual(said.slice(0, 6), [
      'Status is Open',
      'Has all the labels billing',
      'Priority is Urgent',
      'Plan is Pro',
      'Region is EU',
      'Channel is E-mail',
    ]);
    assert.match(said[6], /^Created on or after \S/);
    await dialog.evaluate((d) => d.scrollTo(0, 0));
    await screenshot(page, 'panel-view-builder-en-desktop');
    await dialog.getByRole('button', { name: 'Save view' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.waitForURL((u) => u.searchParams.has('saved'));
    await page.getByRole('heading', { name: 'Urgent billing' }).waitFor();
    // The list says what the view shows.
    await page
      .locator('.view-summary-line')
      .filter({
        hasText: /^Status is Open · Channel is E-mail · Has all the labels billing · Priority is Urgent · Created on or after .+ · Plan is Pro · Region is EU$/,
      })
      .waitFor();
    await list.getByText('Invoice twice').waitFor();
    assert.equal(await list.getByText('Refund please').count(), 0);

    const nav = page.getByRole('list', { name: 'Saved views' });
    const link = nav.getByRole('link', { name: /^Urgent billing/ });
    await link.locator('.count[data-count="1"]').waitFor();
    const stored = (await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data;
    assert.deepEqual(
      stored.map((v: any) => v.name),
      ['Waiting on us', 'Everything', 'Urgent billing'],
    );
    const { created, ...rest } = stored[2].filters;
    assert.deepEqual(rest, {
      status: ['open'],
      label: { all: ['billing'] },
      priority: ['urgent'],
      custom_fields: [
        { key: 'plan', value: 'Pro' },
        { key: 'region', value: 'EU' },
      ],
      channel_kind: ['email'],
    });
    // "From" is the start of that day where the browser is (the same machine as this test).
    assert.deepEqual(created, { after: new Date(since.getFullYear(), since.getMonth(), since.getDate()).toISOString() });

    // Another conversation starts matching: the count follows the realtime event.
    await s.request('PATCH', `/v1/conversations/${ids[1]}`, { token: seed.ownerToken, body: { priority: 'urgent' } });
    await link.locator('.count[data-count="2"]').waitFor();
    await screenshot(page, 'panel-saved-views-en-desktop');

    // Alt+↑ moves it above the other; the focus stays on it and the order is kept.
    await link.focus();
    await page.keyboard.press('Alt+ArrowUp');
    await waitUntil(async () => (await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data[1].name === 'Urgent billing', 10_000, 'moved');
    assert.deepEqual(await nav.getByRole('link').evaluateAll((as) => as.map((a) => a.querySelector('.saved-view-name')?.textContent)), [
      'Waiting on us',
      'Urgent billing',
      'Everything',
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
    // A view made through the API with every condition: each is a row, in words in the summary, and
    // renaming it keeps them as they were.
    const before = (await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data.find((v: any) => v.name === 'Everything');
    await trNav.getByRole('button', { name: 'Everything görünümünü düzenle' }).click();
    const trDialog = phone.page.getByRole('dialog', { name: 'Görünümü düzenle' });
    const trSummary = trDialog.getByRole('region', { name: 'Gösterilen konuşmalar' });
    await trSummary
      .getByRole('listitem')
      .filter({ hasText: /^Plan: Pro$/ })
      .waitFor();
    const trSaid = await trSummary.getByRole('listitem').allTextContents();
    assert.equal(trSaid.length, 18, trSaid.join(' | '));
    for (const part of [
      'Durum: Açık veya Beklemede',
      'Atanan: Ben veya Atanmamış',
      'Ekip: Ekiplerim veya Ekipsiz',
      'billing, vip etiketlerinden biri var',
      'spam-ish etiketlerinden hiçbiri yok',
      'Ertelenmemiş',
      'Kişinin plan değeri gold',
      'Plan: Pro',
      'Region: EU',
      'Konu veya mesaj “invoice” içeriyor',
    ])
      assert.ok(trSaid.includes(part), `${part} in ${trSaid.join(' | ')}`);
    assert.equal(await trDialog.getByRole('group', { name: '1. koşul', exact: true }).getByRole('checkbox', { name: 'Beklemede' }).isChecked(), true);
    assert.equal(await trDialog.getByRole('group', { name: '15. koşul', exact: true }).getByLabel('Özellik').inputValue(), 'plan');
    await trDialog.getByLabel('Ad').fill('Her şey');
    await screenshot(phone.page, 'panel-saved-view-dialog-tr-phone');
    await trDialog.getByRole('group', { name: '15. koşul', exact: true }).scrollIntoViewIfNeeded();
    await screenshot(phone.page, 'panel-saved-view-rows-tr-phone');
    const dialogOverflow = await trDialog.evaluate((d) => d.scrollWidth - d.clientWidth);
    assert.ok(dialogOverflow <= 0, `the dialog does not scroll sideways (${dialogOverflow}px)`);
    await assertAccessible(phone.page);
    await trDialog.getByRole('button', { name: 'Görünümü kaydet' }).click();
    await trDialog.waitFor({ state: 'detached' });
    await trNav.getByRole('link', { name: /^Her şey/ }).waitFor();
    const afterEdit = (await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data.find((v: any) => v.id === before.id);
    assert.equal(afterEdit.name, 'Her şey');
    assert.deepEqual(afterEdit.filters, before.filters);
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
