// What a walk through the panel as an agent found, kept fixed: the navigation's footer fits its
// column; on a phone the shortcuts dialog opens from the navigation; the conversations page has one
// main landmark (in the browser's accessibility tree too) and a first-level heading naming the view;
// the settings lists show the shared loading, error-with-retry and empty states (the error in the
// person's language when the server fails), and a table takes the focus only where it scrolls
// sideways; the reports page names every landmark once. English and Turkish.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { createChatChannel } from '../../src/channels/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SHOP = 'https://shop.example';
const TEXT = {
  en: {
    details: 'Details',
    hide: 'Hide details',
    all: 'All',
    menu: 'Menu',
    shortcuts: 'Keyboard shortcuts',
    signOut: 'Sign out',
    remove: 'Remove',
    cancel: 'Cancel',
    server: 'The server could not answer. Try again in a moment.',
    retry: 'Try again',
    chat: 'Chat',
    channel: 'Channel',
    email: 'E-mail',
    noSubject: '(no subject)',
  },
  tr: {
    details: 'Ayrıntılar',
    hide: 'Ayrıntıları gizle',
    all: 'Tümü',
    menu: 'Menü',
    shortcuts: 'Klavye kısayolları',
    signOut: 'Çıkış yap',
    remove: 'Çıkar',
    cancel: 'Vazgeç',
    server: 'Sunucu yanıt veremedi. Birazdan tekrar deneyin.',
    retry: 'Tekrar dene',
    chat: 'Sohbet',
    channel: 'Kanal',
    email: 'E-posta',
    noSubject: '(konu yok)',
  },
} as const;

describe('panel review fixes', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let conversationId: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_MIGRATION_ALLOW_PRIVATE: '1' } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    const channel = await seedEmailChannel(s.app, seed);
    conversationId = (await deliverMail(s, channel.address!, { From: 'Ada <ada@example.com>', Subject: 'Invoice 4411' }, 'Charged twice.')).conversation_id;
    await s.request('POST', '/v1/api-keys', {
      token: seed.ownerToken,
      body: { name: 'Zapier integration with a rather long name', scopes: ['conversations:read'] },
    });
    await addPerson(s.app, seed.workspaceId, 'agent', 'a-rather-long-support-agent-address@example.com');
    // A migration with no mailbox address yet: the list names it by its provider, once.
    const migration = await s.request('POST', '/v1/migrations', {
      token: seed.ownerToken,
      body: { provider: 'imap', inbox_id: seed.inboxId, imap: { host: '127.0.0.1', port: 9, tls: 'none' } },
    });
    assert.equal(migration.status, 201, JSON.stringify(migration.body));
    await s.request('POST', '/v1/saved-replies', { token: seed.ownerToken, body: { name: 'refund', body: 'We refunded the charge.', scope: 'workspace' } });
    const chat = await createChatChannel(s.app, {
      workspaceId: seed.workspaceId,
      inboxId: seed.inboxId,
      name: 'Chat',
      origins: [SHOP],
      allowAnonymous: true,
      askEmailOffline: false,
      greeting: undefined,
    });
    const visitor = await s.request('POST', '/v1/widget/sessions', { body: { public_key: chat.public_key, name: 'Visitor Kim' }, headers: { origin: SHOP } });
    const asked = await s.request('POST', '/v1/widget/conversations', {
      token: visitor.body.token,
      body: { body: 'Do you ship to Canada?' },
      headers: { origin: SHOP },
    });
    assert.equal(asked.status, 201, JSON.stringify(asked.body));
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  async function ownerPage(lang: 'en' | 'tr', viewport: { width: number; height: number }) {
    await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
    const { context, page } = await browser.newPage({ viewport, locale: lang === 'tr' ? 'tr-TR' : 'en-US' });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    return { context, page, errors };
  }
  /** axe's rules for landmarks and headings (moderate, so assertAccessible lets them pass). */
  async function landmarkViolations(page: Page) {
    const results = await new AxeBuilder({ page }).withRules(['landmark-one-main', 'page-has-heading-one', 'landmark-unique']).analyze();
    return results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }
  const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;

  test('without JavaScript the page says what it needs in English and Turkish', async () => {
    // Chromium's switch for scripts leaves <noscript> unrendered, so this reads the page as served.
    const html = await (await fetch(`${s.url}/sign-in`)).text();
    const note = /<noscript>([\s\S]*?)<\/noscript>/.exec(html)?.[1] ?? '';
    assert.match(note, /<p>The svc panel needs JavaScript\.<\/p>/);
    assert.match(note, /<p lang="tr">svc paneli JavaScript gerektirir\.<\/p>/);
  });

  for (const lang of ['en', 'tr'] as const) {
    const x = TEXT[lang];

    test(`conversations page: footer inside the navigation, one main landmark, the view as the heading (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 1280, height: 800 });
      await page.goto(`${s.url}/conversations`);
      await page.getByRole('button', { name: x.signOut, exact: true }).waitFor();
      const nav = await box(page, '.shell > .nav');
      for (const name of [x.signOut]) {
        const b = (await page.getByRole('button', { name, exact: true }).boundingBox())!;
        assert.ok(b.x + b.width <= nav.x + nav.width, `${name} ends at ${b.x + b.width}, the navigation at ${nav.x + nav.width}`);
      }
      await page.getByRole('heading', { level: 1, name: x.all, exact: true }).waitFor();
      assert.equal(await page.getByRole('main').count(), 1);
      // The main element only groups grid cells (display: contents); the browser must still expose it.
      const cdp = await context.newCDPSession(page);
      const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { role?: { value?: string }; ignored?: boolean }[] };
      assert.ok(
        nodes.some((n) => n.role?.value === 'main' && !n.ignored),
        'a main landmark in the accessibility tree',
      );
      assert.deepEqual(await landmarkViolations(page), []);
      await assertAccessible(page);
      await screenshot(page, `review-conversations-${lang}`);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`a chat is named by its channel, not as mail without a subject; the details name the channel (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 1280, height: 800 });
      await page.goto(`${s.url}/conversations`);
      const row = page.getByRole('link', { name: /Visitor Kim/ });
      await row.waitFor();
      assert.equal(await row.locator('.subject').innerText(), x.chat);
      assert.ok(!(await row.innerText()).includes(x.noSubject));
      await row.click();
      await page.getByRole('heading', { level: 2, name: x.chat, exact: true }).waitFor();
      const channel = page.locator('.details dt', { hasText: x.channel }).locator('xpath=following-sibling::dd[1]');
      assert.equal(await channel.innerText(), x.chat);
      await page.goto(`${s.url}/conversations/${conversationId}`);
      await page.getByRole('heading', { level: 2, name: 'Invoice 4411', exact: true }).waitFor();
      assert.equal(await channel.innerText(), x.email);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`phone: the shortcuts dialog opens from the navigation and Esc closes it (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 390, height: 844 });
      await page.goto(`${s.url}/conversations`);
      await page.getByRole('button', { name: x.menu, exact: true }).click();
      const help = page.getByRole('button', { name: x.shortcuts, exact: true });
      await help.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: x.shortcuts });
      await dialog.waitFor({ state: 'visible' });
      assert.equal(await page.evaluate(() => document.activeElement?.closest('[role="dialog"]') !== null), true, 'the focus moved into the dialog');
      await assertAccessible(page);
      await screenshot(page, `review-phone-shortcuts-${lang}`);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`phone: the details have a way back to the conversation, and the focus follows (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 390, height: 844 });
      await page.goto(`${s.url}/conversations/${conversationId}`);
      const toggle = page.getByRole('button', { name: x.details, exact: true });
      await toggle.focus();
      await page.keyboard.press('Enter');
      const back = page.getByRole('button', { name: `← ${x.hide}`, exact: true });
      await back.waitFor({ state: 'visible' });
      assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), `← ${x.hide}`, 'the focus is on the way back');
      assert.equal(await page.getByRole('log').isVisible(), false, 'the details replace the conversation');
      await assertAccessible(page);
      await screenshot(page, `review-phone-details-${lang}`);
      await page.keyboard.press('Enter');
      await page.getByRole('log').waitFor({ state: 'visible' });
      await page.waitForFunction((name) => document.activeElement?.textContent?.trim() === name, x.details);
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      // On a desktop the details sit beside the conversation and the way back is not there.
      await page.setViewportSize({ width: 1280, height: 800 });
      await toggle.click();
      const details = page.getByRole('complementary', { name: x.details });
      await details.waitFor();
      assert.equal(await back.isVisible(), false);
      // The hidden way back leaves no gap: the first heading starts at the column's padding.
      const gap = await details.evaluate((el) => el.querySelector('h3')!.getBoundingClientRect().top - el.getBoundingClientRect().top);
      assert.ok(gap <= 17, `the first heading starts ${gap} px down`);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`settings lists: error in the person's language with a retry, the table focusable only when it scrolls (${lang})`, async () => {
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 390, height: 844 },
      ]) {
        const { context, page, errors } = await ownerPage(lang, viewport);
        const fail = (route: { fulfill: (r: object) => Promise<void> }) =>
          route.fulfill({
            status: 503,
            contentType: 'application/json',
            body: JSON.stringify({ error: { code: 'unavailable', message: 'Service unavailable' } }),
          });
        await page.route('**/v1/api-keys', fail);
        await page.goto(`${s.url}/settings/api-keys`);
        const alert = page.getByRole('alert').filter({ hasText: x.server });
        await alert.waitFor();
        assert.equal(await page.getByText('Service unavailable').count(), 0, 'not the server’s English text');
        await assertAccessible(page);
        await page.unroute('**/v1/api-keys', fail);
        await alert.getByRole('button', { name: x.retry }).click();
        const region = page.getByRole('region', { name: lang === 'tr' ? 'API anahtarları' : 'API keys' });
        await region.getByRole('cell', { name: /Zapier integration/ }).waitFor();
        const scrolls = await region.evaluate((el) => el.scrollWidth > el.clientWidth);
        assert.equal(await region.getAttribute('tabindex'), scrolls ? '0' : null, `scrolls: ${scrolls} at ${viewport.width}`);
        if (viewport.width === 1280) assert.equal(scrolls, false, 'the keys table fits a desktop');
        await assertAccessible(page);
        assert.deepEqual(errors, []);
        await context.close();
      }
    });

    test(`inboxes and workspace settings: skeleton, error with retry and a heading in every state (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 1280, height: 800 });
      await page.goto(`${s.url}/settings/account`);
      await page.locator('.settings-main h1').waitFor();
      // The inbox list fails once, after the panel itself has loaded the inboxes.
      let failures = 0;
      await page.route('**/v1/inboxes', (route) => {
        failures++;
        return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"Service unavailable"}}' });
      });
      await page.getByRole('link', { name: lang === 'tr' ? 'Gelen kutuları ve kanallar' : 'Inboxes and channels', exact: true }).click();
      const alert = page.getByRole('alert').filter({ hasText: x.server });
      await alert.waitFor();
      assert.ok(failures >= 1);
      await page.unroute('**/v1/inboxes');
      await alert.getByRole('button', { name: x.retry }).click();
      await page.getByRole('link', { name: 'Support', exact: true }).waitFor();

      await page.route('**/v1/workspace', (route) =>
        route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"unavailable","message":"Service unavailable"}}' }),
      );
      await page.goto(`${s.url}/settings/workspace`);
      await page.getByRole('alert').filter({ hasText: x.server }).waitFor();
      await page.getByRole('heading', { level: 1, name: lang === 'tr' ? 'Çalışma alanı' : 'Workspace' }).waitFor();
      assert.deepEqual(await landmarkViolations(page), []);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`members on a phone: a long address wraps and the role picker moves below it (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 390, height: 844 });
      await page.goto(`${s.url}/settings/members`);
      // A member without a name is named by the address, once.
      const card = page.locator('li.card', { hasText: 'a-rather-long-support-agent-address@example.com' });
      await card.waitFor();
      assert.equal((await card.locator('.row-text').innerText()).split('a-rather-long-support-agent-address@example.com').length - 1, 1);
      const problems = await page.evaluate(() =>
        [...document.querySelectorAll('.settings-main li.card > div > span:first-child')].flatMap((text) => {
          const out: string[] = [];
          const label = (text.textContent ?? '').slice(0, 30);
          if (text.scrollWidth > text.clientWidth + 1) out.push(`${label}: its text overflows (${text.scrollWidth} > ${text.clientWidth})`);
          const r = text.getBoundingClientRect();
          for (const control of text.parentElement!.querySelectorAll('select, button')) {
            const c = control.getBoundingClientRect();
            if (c.left < r.right && c.right > r.left && c.top < r.bottom && c.bottom > r.top) out.push(`${label}: covered by ${control.tagName}`);
          }
          return out;
        }),
      );
      assert.deepEqual(problems, []);
      await assertAccessible(page);
      await screenshot(page, `review-members-phone-${lang}`);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`a confirmation in the settings covers the window, starts on Cancel and returns the focus (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 1280, height: 800 });
      await page.goto(`${s.url}/settings/members`);
      const remove = page.getByRole('button', { name: x.remove, exact: true }).first();
      await remove.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      // The settings column's own rules (its children's width, its headings' margins) do not reach it.
      assert.deepEqual(await box(page, '.dialog-backdrop'), { x: 0, y: 0, width: 1280, height: 800 });
      const d = await box(page, '.dialog');
      assert.ok(Math.abs(d.x + d.width / 2 - 640) <= 1 && Math.abs(d.y + d.height / 2 - 400) <= 1, `centred: ${JSON.stringify(d)}`);
      // Enter right away must not remove anyone; one way to dismiss, not two.
      assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), x.cancel);
      assert.deepEqual(await dialog.getByRole('button').allTextContents(), [x.remove, x.cancel]);
      await screenshot(page, `review-confirm-${lang}`);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await remove.evaluate((el) => el === document.activeElement), true, 'the focus is back on Remove');
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`migrations: a migration without an address is named by its provider once (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 390, height: 844 });
      await page.goto(`${s.url}/settings/migrations`);
      const row = page
        .getByRole('region', { name: lang === 'tr' ? 'Hizmete taşı' : 'Move to the service' })
        .getByRole('row')
        .nth(1);
      await row.getByRole('link').waitFor();
      const name = (await row.getByRole('link').textContent())!.trim();
      assert.equal((await row.getByRole('cell').first().textContent())!.trim(), name);
      await row.getByRole('link').click();
      await page.getByRole('heading', { level: 1, name: new RegExp(name) }).waitFor();
      assert.equal(await page.locator('.settings-main h1 + p.muted', { hasText: name }).count(), 0, 'not repeated under the heading');
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`saved replies: the table's region is named apart from its section (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 1280, height: 800 });
      await page.goto(`${s.url}/settings/saved-replies`);
      await page.getByRole('cell', { name: '#refund', exact: true }).waitFor();
      assert.deepEqual(await landmarkViolations(page), []);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`reports: every landmark named once (${lang})`, async () => {
      const { context, page, errors } = await ownerPage(lang, { width: 1280, height: 800 });
      await page.goto(`${s.url}/reports`);
      await page.getByRole('region', { name: lang === 'tr' ? 'Aylara göre kullanım' : 'Usage by month' }).waitFor();
      assert.deepEqual(await landmarkViolations(page), []);
      assert.deepEqual(errors, []);
      await context.close();
      // On a phone the five columns of usage scroll sideways: the keyboard reaches the table to scroll it.
      const phone = await ownerPage(lang, { width: 390, height: 844 });
      await phone.page.goto(`${s.url}/reports`);
      const usage = phone.page.getByRole('region', { name: lang === 'tr' ? 'Aylara göre kullanım' : 'Usage by month' });
      await usage.waitFor();
      assert.equal(await usage.evaluate((el) => el.scrollWidth > el.clientWidth), true, 'the usage table is wider than a phone');
      assert.equal(await usage.getAttribute('tabindex'), '0');
      await usage.focus();
      await phone.page.keyboard.press('ArrowRight');
      await phone.page.waitForFunction(
        (name) => {
          const el = [...document.querySelectorAll('.table-wrap')].find((w) => w.getAttribute('aria-label') === name);
          return !!el && el.scrollLeft > 0;
        },
        lang === 'tr' ? 'Aylara göre kullanım' : 'Usage by month',
      );
      // The ten totals (with first response and resolution in business hours) sit two to a row on a
      // phone rather than one long column.
      const tops = await phone.page.locator('.report-totals > div').evaluateAll((items) => items.map((i) => Math.round(i.getBoundingClientRect().top)));
      assert.equal(tops.length, 10);
      assert.equal(new Set(tops).size, 5, `rows at ${tops.join(', ')}`);
      await assertAccessible(phone.page);
      assert.deepEqual(phone.errors, []);
      await phone.context.close();
    });
  }
});
