// The wizard's Connect and Choose steps for help desks in a real browser, against the loopback
// Zendesk and Help Scout fakes: the Connect step asks for the provider's own fields (Zendesk:
// subdomain, agent e-mail, API token; Help Scout: App ID and App Secret), a wrong secret shows the
// failed sign-in step, the right one connects (the secret field is emptied), and Choose offers all
// tickets with their count instead of folders. Once in English, once in Turkish; axe on each page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
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
    zendesk.users = [{ id: 4, name: 'Admin', email: zendesk.email, role: 'admin' }];
    const ticket = (id: number) => ({
      id,
      subject: `Ticket ${id}`,
      status: 'open' as const,
      tags: [],
      requester_id: 4,
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
      comments: [],
    });
    zendesk.tickets = [ticket(1), ticket(2)];
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
});
