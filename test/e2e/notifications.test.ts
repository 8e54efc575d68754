// Notifications in a real browser: a new conversation shows as a toast and on the bell with its
// unread count in the open panel; the bell is the inbox kept on the server, so the count survives a
// reload and shows on another device, and reading there clears it here; My account has the choices
// per trigger and channel, which save.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { generateVapidKeys } from '../../src/push/commands.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('notifications in the panel', { skip: browserSkipReason() }, () => {
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;
  let ownerEmail: string;
  const vapid = generateVapidKeys();

  before(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({
      clock: systemClock,
      env: {
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(sink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@example.test',
        SVC_VAPID_PUBLIC_KEY: vapid.publicKey,
        SVC_VAPID_PRIVATE_KEY: vapid.privateKey,
        SVC_VAPID_SUBJECT: 'mailto:ops@example.test',
      },
    });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed)).address!;
    ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await sink?.close();
  });

  test('a new conversation: toast and bell; the settings save per trigger and channel', async () => {
    const { page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${s.url}/conversations`);
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Work e-mail').fill(ownerEmail);
    const before = sink.messages.length;
    await page.getByRole('button', { name: 'Send code' }).click();
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    await page.getByLabel('Code from the e-mail').fill(/(\d{6})/.exec(mail.parsed.subject ?? '')![1]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/conversations/);
    await page.getByRole('heading', { name: 'All' }).waitFor();
    await page.getByText('Nothing here').waitFor();
    // The panel's socket is open (its connection record exists) before the mail arrives.
    const open = () =>
      s.app.db
        .selectFrom('realtime_connections')
        .select('id')
        .where('kind', '=', 'member')
        .where('subject_id', '=', seed.ownerId)
        .where('closed_at', 'is', null)
        .executeTakeFirst();
    for (let i = 0; i < 100 && !(await open()); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(await open(), 'the panel connected');
    await new Promise((r) => setTimeout(r, 300));

    await deliverMail(s, address, { Subject: 'Toaster on fire' });
    await page.locator('.toast', { hasText: 'Toaster on fire' }).waitFor();
    const bell = page.getByRole('button', { name: /Notifications/ });
    await assert.doesNotReject(bell.locator('.notif-count', { hasText: '1' }).waitFor());
    await bell.click();
    const entry = page.locator('#notif-list').getByRole('link', { name: /Toaster on fire/ });
    await entry.waitFor();
    await assertAccessible(page);
    await bell.click();

    // A reload keeps the count and the entry: they come from the server, not the page's memory.
    await page.reload();
    await page.getByRole('heading', { name: 'All' }).waitFor();
    await bell.locator('.notif-count', { hasText: '1' }).waitFor();
    await bell.click();
    await page
      .locator('#notif-list')
      .getByRole('link', { name: /Toaster on fire/ })
      .waitFor();
    await bell.click();

    // Another device (another browser context, the same member signed in): the same count.
    const other = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'tr-TR' });
    await other.context.addCookies(await page.context().cookies());
    await other.page.goto(`${s.url}/conversations`);
    const otherBell = other.page.locator('.notif-bell > button');
    await otherBell.locator('.notif-count', { hasText: '1' }).waitFor();
    await otherBell.click();
    await other.page.locator('#notif-list li.notif-unread', { hasText: 'Toaster on fire' }).waitFor();
    await assertAccessible(other.page);
    await otherBell.click();
    // Read on the first device: the other's bell clears at once (realtime), and after its reload too.
    await bell.click();
    await page
      .locator('#notif-list')
      .getByRole('link', { name: /Toaster on fire/ })
      .click();
    await page.waitForURL(/\/conversations\/cv_/);
    await bell.locator('.notif-count').waitFor({ state: 'detached' });
    await otherBell.locator('.notif-count').waitFor({ state: 'detached' });
    await other.page.reload();
    await other.page.locator('.notif-bell').waitFor();
    await otherBell.click();
    await other.page.locator('#notif-list li:not(.notif-unread)', { hasText: 'Toaster on fire' }).waitFor();
    assert.equal(await otherBell.locator('.notif-count').count(), 0, 'read stays read after a reload');
    // A second one, then "Mark all as read" on the other device.
    await deliverMail(s, address, { Subject: 'Kettle leaking' });
    await bell.locator('.notif-count', { hasText: '1' }).waitFor();
    await otherBell.locator('.notif-count', { hasText: '1' }).waitFor();
    // The list is still open there: the new one is in it, unread.
    await other.page.locator('#notif-list li.notif-unread', { hasText: 'Kettle leaking' }).waitFor();
    await other.page.locator('#notif-list .notif-read-all').click();
    await bell.locator('.notif-count').waitFor({ state: 'detached' });
    await page.reload();
    await page.locator('.notif-bell').waitFor();
    await page.waitForLoadState('networkidle');
    assert.equal(await bell.locator('.notif-count').count(), 0);
    await other.context.close();

    await page.goto(`${s.url}/settings/account`);
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    const box = page.getByRole('checkbox', { name: 'A new conversation in my inboxes: E-mail' });
    assert.equal(await box.isChecked(), false, 'the default');
    await box.check();
    await page.getByRole('button', { name: 'Get push notifications in this browser' }).waitFor();
    await assertAccessible(page);
    const saved = async () => (await s.request('GET', '/v1/me/notification-preferences', { token: seed.ownerToken })).body.preferences.new_conversation.email;
    for (let i = 0; i < 50 && !(await saved()); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await saved(), true);
    assert.deepEqual(errors, []);
  });
});
