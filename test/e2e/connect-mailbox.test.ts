// The password page of a credentials link in a real browser, signed out: it names the mailbox,
// a wrong password says the login failed and leaves the form, the right one connects the
// migration (tested against a real Dovecot), and the used link then says so. axe on the page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the credentials link page in the panel', { skip: browserSkipReason() ?? dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let migrationId: string;
  let pagePath: string;

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    s = await startTestServer({ clock: systemClock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1' } });
    seed = await seedWorkspace(s.app);
    const created = await s.request('POST', '/v1/migrations', {
      token: seed.apiKey,
      body: { provider: 'imap', source_address: SUPPORT, imap: { host: '127.0.0.1', port: d.port, tls: 'none' } },
    });
    migrationId = created.body.id;
    const link = await s.request('POST', `/v1/migrations/${migrationId}/credentials-link`, { token: seed.apiKey });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    const url = new URL(link.body.url);
    assert.equal(url.origin, s.url);
    pagePath = url.pathname + url.hash;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await d?.stop();
  });

  test('signed out: names the mailbox, refuses a wrong password, connects with the right one', async () => {
    const { page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'en-US' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${s.url}${pagePath}`);
    await page.getByRole('heading', { name: `Connect ${SUPPORT}` }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/migrations/${migrationId}/connect`, 'not sent to sign in');
    await assertAccessible(page);
    assert.equal(await page.getByLabel('User name').inputValue(), SUPPORT);

    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Connect' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /The test failed at: Signing in/);
    assert.equal((await s.request('GET', `/v1/migrations/${migrationId}`, { token: seed.apiKey })).body.state, 'draft');

    await page.getByLabel('Password').fill(SUPPORT_PASSWORD);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected.' }).waitFor();
    const m = (await s.request('GET', `/v1/migrations/${migrationId}`, { token: seed.apiKey })).body;
    assert.equal(m.state, 'connected');
    assert.equal(m.credentials.set, true);
    assert.ok(!requests.some((u) => u.includes('svc_mcl_')), 'the token never travels in a URL');
    assert.ok(!s.rawLogs.some((l) => l.includes(SUPPORT_PASSWORD) || l.includes('not-the-password')), 'no password in the log');

    // The link is used up.
    await page.goto(`${s.url}${pagePath}`);
    await page.reload();
    await page.getByRole('alert').filter({ hasText: 'unknown, used or expired' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
