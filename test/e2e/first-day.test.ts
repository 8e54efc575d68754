// Issue 43 in a real browser (the items built so far): a failing reply says when it is tried again
// and why, with "Retry now" (4); list times tick on a panel left open (5); an agent who opens a
// managers' page by URL is told they have no access, with a way back (10); the header's button says
// what it closes, a skip link leads to the main content, durations use the unit that fits (13, 12).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('first day of a new team', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let address: string;
  let browser: BrowserSession;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await sink?.close();
  });

  async function pageAs(token: string, opts: { width?: number; locale?: string } = {}) {
    const { context, page } = await browser.newPage({ viewport: { width: opts.width ?? 1280, height: 800 }, locale: opts.locale ?? 'en-US' });
    await context.addCookies([{ name: 'svc_session', value: token, url: s.url }]);
    return { context, page };
  }

  test('a reply the mail server refuses: "Not sent yet — will retry at …" with the reason, and Retry now sends it', async () => {
    const c = await deliverMail(s, address, { From: 'Rita <rita@cust.example>', Subject: 'Where is my parcel?' });
    const { context, page } = await pageAs(seed.ownerToken);
    await page.goto(`${s.url}/conversations/${c.conversation_id}`);
    await page.getByRole('button', { name: 'Close conversation' }).waitFor();
    sink.failWith(451);
    await page.getByRole('textbox', { name: 'Reply', exact: true }).fill('It left our warehouse today.');
    await page.keyboard.press('Control+Enter');
    const status = page.locator('.msg-status-pending', { hasText: 'Not sent yet — will retry at' });
    await status.waitFor();
    assert.match(await status.innerText(), /451/);
    await assertAccessible(page);
    await screenshot(page, 'first-day-retry-1280');
    sink.failWith(null);
    const before = sink.messages.length;
    await status.getByRole('button', { name: 'Retry now' }).click();
    await sink.waitFor(before + 1);
    // Sent: no status line is left once the message.updated event arrives.
    await page.locator('.msg-status-pending').waitFor({ state: 'detached' });
    await context.close();
  });

  test('relative times in the list move on while the panel stays open', async () => {
    const { context, page } = await pageAs(seed.ownerToken);
    await page.clock.install({ time: new Date() });
    await deliverMail(s, address, { From: 'Tim <tim@cust.example>', Subject: 'Ticking' });
    await page.goto(`${s.url}/conversations`);
    const when = page.locator('a.row', { hasText: 'Ticking' }).locator('time.when');
    await when.getByText('now', { exact: true }).waitFor();
    await page.clock.fastForward('21:00');
    await when.getByText(/21 min/).waitFor();
    await context.close();
  });

  test('an agent who opens a managers’ page by URL sees that it is not theirs, and a way back; the skip link works', async () => {
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    for (const [locale, heading, back] of [
      ['en', 'You don’t have access to this page', 'Back to my account'],
      ['tr', 'Bu sayfaya erişiminiz yok', 'Hesabıma dön'],
    ] as const) {
      await s.request('PATCH', '/v1/me', { token: agent.token, body: { locale } });
      const { context, page } = await pageAs(agent.token, { width: locale === 'tr' ? 390 : 1280 });
      for (const path of ['/settings/inboxes', `/settings/inboxes/${seed.inboxId}`, '/settings/api-keys', '/settings/webhooks', '/settings/migrations']) {
        await page.goto(`${s.url}${path}`);
        await page.getByRole('heading', { name: heading }).waitFor();
        assert.equal(await page.getByRole('button', { name: /Delete inbox|New API key|Gelen kutusunu sil/ }).count(), 0, path);
        assert.equal(await page.getByLabel(/SMTP/).count(), 0, path);
      }
      await assertAccessible(page);
      await screenshot(page, `first-day-no-access-${locale}`);
      await page.getByRole('link', { name: back }).click();
      await page.waitForURL(/\/settings\/account/);
      await context.close();
    }

    const { context, page } = await pageAs(seed.ownerToken);
    await page.goto(`${s.url}/conversations`);
    await page.locator('#main').waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to main content' });
    assert.equal(await skip.evaluate((a) => a === document.activeElement), true, 'the skip link comes first');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'main' || !!document.activeElement?.closest('#main'));
    await context.close();
  });
});
