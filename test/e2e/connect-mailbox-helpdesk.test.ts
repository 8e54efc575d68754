// The page of a credentials link for a help desk in a real browser, signed out: it shows the
// wizard's Zendesk form (subdomain, agent e-mail, API token) instead of a password, a wrong token
// says which step failed and leaves the form, the right one connects (tested against the loopback
// Zendesk fake), and the used link then says so. axe on the page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { FakeZendesk } from '../helpers/helpdesk-fakes.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the credentials link page for a help desk', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let migrationId: string;
  let pagePath: string;
  const zendesk = new FakeZendesk();

  before(async () => {
    await zendesk.start();
    zendesk.users = [{ id: 4, name: 'Admin', email: 'agent@acme.test', role: 'admin' }];
    s = await startTestServer({ clock: systemClock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1', SVC_MIGRATION_ZENDESK_URL: zendesk.url } });
    seed = await seedWorkspace(s.app);
    const channel = await seedEmailChannel(s.app, seed, { address: 'help@acme.test' });
    const created = await s.request('POST', '/v1/migrations', {
      token: seed.apiKey,
      body: { provider: 'zendesk', inbox_id: seed.inboxId, channel_id: channel.id },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    migrationId = created.body.id;
    const link = await s.request('POST', `/v1/migrations/${migrationId}/credentials-link`, { token: seed.apiKey });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    const url = new URL(link.body.url);
    pagePath = url.pathname + url.hash;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await zendesk.stop();
  });

  test('signed out: the Zendesk fields, a wrong token refused, the right one connects', async () => {
    const { page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'en-US' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${s.url}${pagePath}`);
    await page.getByRole('heading', { name: 'Connect to Zendesk' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/migrations/${migrationId}/connect`, 'not sent to sign in');
    assert.equal(await page.getByLabel('Password', { exact: true }).count(), 0, 'no password field');
    await assertAccessible(page);

    await page.getByLabel('Zendesk subdomain').fill('acme');
    await page.getByLabel('Agent e-mail address').fill('agent@acme.test');
    await page.getByLabel('API token').fill('not-the-token');
    await page.getByRole('button', { name: 'Save and test' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /failed/i);
    assert.equal((await s.request('GET', `/v1/migrations/${migrationId}`, { token: seed.apiKey })).body.state, 'draft');

    await page.getByLabel('API token').fill(zendesk.token);
    await page.getByRole('button', { name: 'Save and test' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected.' }).waitFor();
    const m = (await s.request('GET', `/v1/migrations/${migrationId}`, { token: seed.apiKey })).body;
    assert.equal(m.state, 'connected');
    assert.equal(m.credentials.set, true);
    assert.ok(!requests.some((u) => u.includes('svc_mcl_')), 'the token never travels in a URL');
    assert.ok(!s.rawLogs.some((l) => l.includes(zendesk.token) || l.includes('not-the-token')), 'no secret in the log');

    await page.goto(`${s.url}${pagePath}`);
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'unknown, used or expired' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
