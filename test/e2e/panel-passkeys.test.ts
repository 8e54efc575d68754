// Passkeys from the panel itself: add one in My account, rename it, sign out, sign back in with it
// from the sign-in page (no address typed), remove it. Passkeys need a secure context: localhost.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addVirtualAuthenticator, assertAccessible, type BrowserSession, browserSkipReason, freePort, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('passkeys in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let origin: string;
  let browser: BrowserSession;

  before(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    s = await startTestServer({ env: { SVC_HTTP_ADDR: `127.0.0.1:${port}`, SVC_PUBLIC_URL: origin } });
    seed = await seedWorkspace(s.app);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  test('add, rename, sign in with it, remove', async () => {
    const { context, page } = await browser.newPage();
    const authenticator = await addVirtualAuthenticator(page);
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: origin }]);
    await page.goto(`${origin}/settings/account`);
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByText('No passkeys yet.').waitFor();
    await section.getByRole('button', { name: 'Add a passkey' }).click();
    await section.getByText('Passkey', { exact: true }).waitFor();
    assert.equal((await authenticator.credentials()).length, 1);
    await section.getByRole('button', { name: 'Rename' }).click();
    await section.getByLabel('Name of this passkey').fill('Work laptop');
    await section.getByLabel('Name of this passkey').press('Enter');
    await section.getByText('Work laptop').waitFor();
    await assertAccessible(page);

    await page.getByRole('link', { name: /Back to conversations/ }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(/\/conversations/);
    await page.getByRole('heading', { name: 'All' }).waitFor();
    const cookie = (await context.cookies(origin)).find((c) => c.name === 'svc_session');
    assert.ok(cookie && cookie.value !== seed.ownerToken, 'a new session');
    const me = await s.request('GET', '/v1/me', { token: cookie.value });
    assert.equal(me.status, 200);

    await page.goto(`${origin}/settings/account`);
    await section.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await section.getByText('No passkeys yet.').waitFor();
    await context.close();
  });
});
