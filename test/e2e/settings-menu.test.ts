// The settings menu on a phone-sized window (390×844): the list of settings pages is collapsed
// behind one "Settings: <page>" button (a disclosure: aria-expanded, aria-controls), so each page's
// content starts near the top; the keyboard opens it, Tab reaches the pages, Enter goes to one (the
// menu closes and names the new page), Esc closes it and gives the focus back. On a desktop the
// list is shown as before and the button is not there. English and Turkish; axe on each state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the settings menu on phones and desktops', { skip: browserSkipReason() }, () => {
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

  async function ownerPage(viewport: { width: number; height: number }) {
    const { context, page } = await browser.newPage({ viewport });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    return { context, page, errors };
  }
  const focused = (page: Page) => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
  const top = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!.y;

  async function phoneMenu(
    lang: 'en' | 'tr',
    texts: { workspace: string; members: string; account: string; heading: string; accountHeading: string; menu: string; back: string },
  ) {
    const { context, page, errors } = await ownerPage({ width: 390, height: 844 });
    await page.goto(`${s.url}/settings/workspace`);
    await page.getByRole('heading', { name: texts.heading, exact: true }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), lang);
    const toggle = page.getByRole('button', { name: `${texts.menu}: ${texts.workspace}` });
    await toggle.waitFor();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    const list = page.locator(`#${await toggle.getAttribute('aria-controls')}`);
    assert.equal(await list.isVisible(), false, 'the pages are collapsed');
    assert.equal(await page.getByRole('link', { name: texts.members }).isVisible(), false);
    // Beside the button the way back is an arrow, still named for screen readers.
    assert.equal(await page.getByRole('link', { name: texts.back, exact: true }).isVisible(), true);
    // The page's own heading starts right under the one-line menu, not below a block of links.
    assert.ok((await top(page, '.settings-main h1')) < 120, `heading at ${await top(page, '.settings-main h1')} px`);
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no horizontal scrolling');
    await assertAccessible(page);
    await screenshot(page, `settings-menu-phone-closed-${lang}`);

    // Keyboard only: Tab to the button, Enter opens it; Tab reaches the pages, the current one marked.
    for (let i = 0; i < 10 && (await focused(page)) !== `${texts.menu}: ${texts.workspace}`; i++) await page.keyboard.press('Tab');
    assert.equal(await focused(page), `${texts.menu}: ${texts.workspace}`);
    await page.keyboard.press('Enter');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
    assert.equal(await list.isVisible(), true);
    assert.equal(await page.getByRole('link', { name: texts.workspace }).getAttribute('aria-current'), 'page');
    await assertAccessible(page);
    await screenshot(page, `settings-menu-phone-open-${lang}`);
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), texts.workspace);
    // Esc closes it and gives the focus back to the button.
    await page.keyboard.press('Escape');
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    assert.equal(await list.isVisible(), false);
    assert.equal(await focused(page), `${texts.menu}: ${texts.workspace}`);

    // Space opens it too; Enter on a page goes there, closes the menu and names the new page.
    await page.keyboard.press('Space');
    assert.equal(await list.isVisible(), true);
    for (let i = 0; i < 12 && (await focused(page)) !== texts.account; i++) await page.keyboard.press('Tab');
    assert.equal(await focused(page), texts.account);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${s.url}/settings/account`);
    await page.getByRole('heading', { name: texts.accountHeading, exact: true }).waitFor();
    const after = page.getByRole('button', { name: `${texts.menu}: ${texts.account}` });
    await after.waitFor();
    assert.equal(await after.getAttribute('aria-expanded'), 'false');
    assert.equal(await list.isVisible(), false);
    await assertAccessible(page);
    assert.deepEqual(errors, []);
    await context.close();
  }

  test('on a phone, in English: collapsed behind "Settings: <page>", opened and used by the keyboard', async () => {
    await phoneMenu('en', {
      workspace: 'Workspace',
      members: 'Members',
      account: 'My account',
      heading: 'Acme',
      accountHeading: 'My account',
      menu: 'Settings',
      back: 'Back to conversations',
    });
  });

  test('on a phone, in Turkish', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      await phoneMenu('tr', {
        workspace: 'Çalışma alanı',
        members: 'Üyeler',
        account: 'Hesabım',
        heading: 'Acme',
        accountHeading: 'Hesabım',
        menu: 'Ayarlar',
        back: 'Konuşmalara dön',
      });
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });

  test('on a desktop the list is shown as before and there is no menu button', async () => {
    const { context, page, errors } = await ownerPage({ width: 1280, height: 800 });
    await page.goto(`${s.url}/settings/workspace`);
    await page.getByRole('heading', { name: 'Acme', exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: /^Settings:/ }).count(), 0);
    for (const name of ['Workspace', 'Members', 'Inboxes and channels', 'API keys', 'Move to the service', 'My account'])
      assert.equal(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name, exact: true }).isVisible(), true, name);
    const nav = (await page.getByRole('navigation', { name: 'Settings' }).boundingBox())!;
    assert.ok(nav.height > 700 && nav.width < 300, 'the left column, full height');
    await assertAccessible(page);
    await screenshot(page, 'settings-menu-desktop-en');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
