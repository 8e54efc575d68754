// The wizard's Connect and Choose steps for help desks in a real browser, against the loopback
// Zendesk and Help Scout fakes: the Connect step asks for the provider's own fields (Zendesk:
// subdomain, agent e-mail, API token; Help Scout: App ID and App Secret), a wrong secret shows the
// failed sign-in step, the right one connects (the secret field is emptied), and Choose offers all
// tickets with their count instead of folders. Once in English, once in Turkish; axe on each page.
// Every other text of the wizard follows the source too (action bar, read-only banner, Map, the dry
// run with the tickets' tag counts, the activity log), in English on a desktop and in Turkish on a
// phone, driven by the keyboard.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { FakeHelpScout, FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the migration wizard for help desks', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let channelId: string;
  let browser: BrowserSession;
  const zendesk = new FakeZendesk();
  const helpScout = new FakeHelpScout();

  before(async () => {
    await zendesk.start();
    await helpScout.start();
    s = await startTestServer({
      clock: systemClock,
      env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_ZENDESK_URL: zendesk.url, SVC_MIGRATION_HELPSCOUT_URL: helpScout.url },
    });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    channelId = (await seedEmailChannel(s.app, seed, { address: 'help@acme.test' })).id;
    zendesk.users = [
      { id: 4, name: 'Admin', email: zendesk.email, role: 'admin' },
      { id: 5, name: 'Ada Customer', email: 'ada@customer.test', role: 'end-user' },
    ];
    const ticket = (id: number, tags: string[]) => ({
      id,
      subject: `Ticket ${id}`,
      status: 'open' as const,
      tags,
      requester_id: 5,
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
      comments: [
        { id: id * 10, author_id: 5, public: true, body: `Question ${id}`, created_at: '2026-01-01T00:00:00Z' },
        { id: id * 10 + 1, author_id: 4, public: true, body: `Answer ${id}`, created_at: '2026-01-01T01:00:00Z' },
      ],
    });
    zendesk.tickets = [ticket(1, ['billing', 'vip']), ticket(2, ['billing'])];
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await zendesk.stop();
    await helpScout.stop();
  });

  const create = async (provider: string) => {
    const r = await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider, inbox_id: seed.inboxId, channel_id: channelId } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };

  test('Zendesk: the Connect step asks for subdomain, agent e-mail and API token; Choose offers all tickets', async () => {
    const id = await create('zendesk');
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/settings/migrations/${id}`);
    await page.getByRole('heading', { name: 'Connect to Zendesk' }).waitFor();
    assert.equal(await page.getByLabel('Password', { exact: true }).count(), 0, 'no mailbox password field');
    await assertAccessible(page);
    await page.getByLabel('Zendesk subdomain').fill('acme');
    await page.getByLabel('Agent e-mail address').fill(zendesk.email);
    await page.getByLabel('API token').fill('wrong-token');
    await page.getByRole('button', { name: 'Save and test' }).click();
    await page.getByText('The test failed at: Signing in').waitFor();
    await page.getByLabel('API token').fill(zendesk.token);
    await page.getByRole('button', { name: 'Save and test' }).click();
    await page.getByText('Connected. The ticket list was read; nothing was changed.').waitFor();
    await page.getByRole('link', { name: 'Next: choose tickets' }).waitFor();
    assert.equal(await page.getByLabel('API token').inputValue(), '', 'the token is not kept in the page');
    await page.getByRole('link', { name: 'Next: choose tickets' }).click();
    await page.getByText('All tickets (2)').waitFor();
    assert.equal(await page.getByRole('group', { name: 'Tickets' }).count(), 1);
    await assertAccessible(page);
    assert.deepEqual(zendesk.writes(), []);
    await context.close();
  });

  test('Help Scout in Turkish: App ID and App Secret', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const id = await create('help_scout');
      const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/settings/migrations/${id}`);
      await page.getByRole('heading', { name: 'Help Scout’a bağlan' }).waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'tr');
      await page.getByLabel('App ID').fill(helpScout.appId);
      await page.getByLabel('App Secret').fill(helpScout.appSecret);
      await page.getByRole('button', { name: 'Kaydet ve sına' }).click();
      await page.getByText('Talep listesi okundu', { exact: false }).waitFor();
      await page.getByRole('link', { name: 'Sonraki: talepleri seç' }).click();
      await page.getByText('Tüm talepler (0)').waitFor();
      await assertAccessible(page);
      assert.deepEqual(helpScout.writes(), []);
      await context.close();
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });

  /** A Zendesk migration connected through the API, ready for the Choose step. */
  const connectedZendesk = async () => {
    const id = await create('zendesk');
    const r = await s.request('PUT', `/v1/migrations/${id}/credentials`, {
      token: seed.apiKey,
      body: { subdomain: 'acme', email: zendesk.email, api_token: zendesk.token },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.state, 'connected');
    return id;
  };
  const actionTexts = (page: Page) =>
    page.locator('.mig-actions [data-action]').evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-action'), e.textContent])));
  /** Presses Tab until the element has the focus (keyboard only, as a person would). */
  async function tabTo(page: Page, selector: string) {
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, selector)) return;
    }
    assert.fail(`Tab never reached ${selector}`);
  }

  test('Zendesk: the action bar, banner, Map, dry run (with tag counts) and log speak of tickets and API credentials', async () => {
    const id = await connectedZendesk();
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/settings/migrations/${id}`);
    await page.locator('h1 [data-state="connected"]').waitFor();
    const bar = await actionTexts(page);
    assert.equal(bar.credentials, 'Change API credentials');
    // The Choose step is the one shown: the bar offers no link to it (issue 43, item 11).
    assert.equal(bar.folders, undefined);
    assert.equal(bar.scan, 'Read tickets for the dry run');
    const banner = await page.getByTestId('read-only').innerText();
    assert.match(banner, /No changes were made to the provider\. Tickets are read through the help desk’s API with GET requests only/);
    assert.doesNotMatch(banner, /[Ff]older/);
    assert.doesNotMatch(await page.locator('main').innerText(), /password|[Ff]olders are opened|Read headers/);

    // Choose, then Map: one label for the tickets (their tags become labels), agents' addresses.
    await page.getByRole('button', { name: 'Next: map' }).click();
    await page.getByRole('group', { name: 'A label for the imported tickets' }).waitFor();
    await page.getByText('Each ticket’s tags become labels as well.').waitFor();
    await page.getByText('Replies from these agent addresses are the team’s').waitFor();
    await assertAccessible(page);
    await page.getByRole('button', { name: 'Next: review the dry run' }).click();
    await page.locator('h1 [data-state="scanning"]').waitFor();
    await page.getByText('Reading the tickets…').waitFor();
    assert.equal(await page.locator('h1 [data-state="scanning"]').innerText(), 'Reading tickets');
    await s.app.jobs.drain();
    await page.locator('h1 [data-state="ready"]').waitFor();
    const m = (await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey })).body;
    const summary = m.plan.summary;
    assert.deepEqual(summary.tags, [
      { tag: 'billing', messages: 4, conversations: 2 },
      { tag: 'vip', messages: 2, conversations: 1 },
    ]);
    const totals = page.getByTestId('totals');
    assert.equal(await totals.locator('dt:has-text("Messages in the tickets") + dd').innerText(), String(summary.total));
    await page.getByRole('region', { name: 'Counts', exact: true }).getByRole('columnheader', { name: 'Source' }).waitFor();
    const tagRows = await page
      .getByTestId('tag-counts')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    assert.deepEqual(
      tagRows,
      summary.tags.map((x: { tag: string; conversations: number; messages: number }) => [x.tag, String(x.conversations), String(x.messages)]),
    );
    await page.getByRole('heading', { name: 'Tags that become labels' }).waitFor();
    assert.equal((await actionTexts(page)).scan, 'Read tickets for the dry run');
    await page.locator('.mig-activity summary').click();
    await page.locator('.mig-log li', { hasText: 'API credentials entered' }).waitFor();
    await page.locator('.mig-log li', { hasText: 'Reading tickets' }).waitFor();
    await assertAccessible(page);
    await screenshot(page, 'migration-helpdesk-review-en');

    // Cancelling names the API credentials and the help desk, not a password and a mailbox.
    await page.locator('[data-action="cancel"]').click();
    await page.getByText('The migration stops and its API credentials are deleted from this server.').waitFor();
    await page.getByText('The help desk is not changed.', { exact: false }).waitFor();
    await page.keyboard.press('Escape');
    assert.deepEqual(zendesk.writes(), []);
    await context.close();
  });

  test('in Turkish on a phone, by the keyboard: the same texts for tickets', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const id = await connectedZendesk();
      const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/settings/migrations/${id}`);
      await page.locator('h1 [data-state="connected"]').waitFor();
      const bar = await actionTexts(page);
      assert.equal(bar.credentials, 'API kimlik bilgilerini değiştir');
      assert.equal(bar.folders, undefined, 'the Choose step is shown: no link to it');
      assert.equal(bar.scan, 'Deneme çalışması için talepleri oku');
      assert.match(await page.getByTestId('read-only').innerText(), /yalnızca GET istekleriyle okunur/);
      assert.doesNotMatch(await page.locator('main').innerText(), /Parola|Klasörler salt okunur|başlıkları oku/);
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no horizontal scrolling');
      await assertAccessible(page);
      await tabTo(page, '[data-action="scan"]');
      await page.keyboard.press('Enter');
      await page.getByText('Talepler okunuyor…').waitFor();
      await s.app.jobs.drain();
      await page.locator('h1 [data-state="ready"]').waitFor();
      await page.getByRole('heading', { name: 'Etikete dönüşen talep etiketleri' }).waitFor();
      const tags = await page.getByTestId('tag-counts').locator('tbody th').allInnerTexts();
      assert.deepEqual(tags, ['billing', 'vip']);
      await page.getByTestId('totals').locator('dt:has-text("Taleplerdeki iletiler")').waitFor();
      await assertAccessible(page);
      await screenshot(page, 'migration-helpdesk-review-tr-phone');
      await context.close();
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });
});
