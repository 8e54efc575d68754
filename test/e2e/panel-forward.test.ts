// Issue 33 in the panel: forwarding a message (key f or its Forward button) and starting a conversation
// (key c, the New conversation button, a contact's "Write to …"), with the keyboard alone; the mail
// reaches the smtp-server sink as written. Grace in English on a desktop, Ayşe in Turkish at phone
// width; axe on each dialog; screenshots at 1280×800 and 390×844.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('forward and new conversations in the panel', { skip: browserSkipReason() }, () => {
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;
  let ayse: { personId: string; token: string };

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    ayse = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { name: 'Grace', locale: 'en' } })).status, 200);
    assert.equal((await s.request('PATCH', '/v1/me', { token: ayse.token, body: { name: 'Ayşe', locale: 'tr' } })).status, 200);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await sink?.close();
  });

  async function memberPage(token: string, locale: string, viewport: { width: number; height: number }) {
    const { context, page } = await browser.newPage({ viewport, locale });
    await context.addCookies([{ name: 'svc_session', value: token, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    return { context, page, errors };
  }

  const focusedId = (page: import('playwright-core').Page) => page.evaluate(() => document.activeElement?.id);

  test('en, desktop: f forwards the newest message with the keyboard; c starts a conversation', async () => {
    const { conversation_id: id } = await deliverMail(
      s,
      address,
      { From: 'Ann <ann@cust.example>', Subject: 'Broken hinge', 'Message-ID': '<e2e-f1@cust.example>' },
      'The hinge broke after a week.',
    );
    const { context, page, errors } = await memberPage(seed.ownerToken, 'en-US', { width: 1280, height: 800 });
    await page.goto(`${s.url}/conversations/${id}`);
    await page.getByRole('heading', { name: 'Broken hinge' }).waitFor();
    await page.locator('.msg-body', { hasText: 'The hinge broke after a week.' }).waitFor();
    // Every message has its Forward button (a real button: reachable with Tab).
    assert.equal(await page.locator('.msg').first().getByRole('button', { name: 'Forward' }).count(), 1);

    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('f');
    const dialog = page.getByRole('dialog', { name: 'Forward: Broken hinge' });
    await dialog.waitFor();
    assert.equal(await focusedId(page), 'forward-to');
    await page.keyboard.type('Workshop <repairs@partner.example>');
    await page.keyboard.press('Tab');
    await page.keyboard.type('lead@partner.example');
    await page.keyboard.press('Tab');
    assert.equal(await focusedId(page), 'forward-bcc');
    await page.keyboard.press('Tab');
    assert.equal(await focusedId(page), 'forward-note');
    await page.keyboard.type('Can you repair this one?');
    await assertAccessible(page);
    await screenshot(page, 'panel-forward-en-1280');
    const count = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.parsed.subject, 'Fwd: Broken hinge');
    assert.deepEqual([...mail.to].sort(), ['lead@partner.example', 'repairs@partner.example']);
    assert.match(mail.parsed.text ?? '', /^Can you repair this one\?/);
    assert.match(mail.parsed.text ?? '', /From: Ann <ann@cust\.example>/);
    await dialog.waitFor({ state: 'detached' });
    // The thread shows it as a forward: by whom, to whom.
    const forward = page.locator('.msg.out').filter({ hasText: 'Can you repair this one?' });
    await forward.locator('.badge', { hasText: 'Forwarded' }).waitFor();
    await forward.getByText('Forwarded by You to Workshop, lead@partner.example').waitFor();
    await screenshot(page, 'panel-forwarded-en-1280');

    // c: a new conversation, written with the keyboard alone.
    await page.goto(`${s.url}/conversations`);
    await page.getByRole('button', { name: 'New conversation' }).waitFor();
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('c');
    const compose = page.getByRole('dialog', { name: 'New conversation' });
    await compose.waitFor();
    assert.equal(await focusedId(page), 'new-to');
    await page.keyboard.type('Nora Lind <nora@new.example>');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await focusedId(page), 'new-subject');
    await page.keyboard.type('Your order is ready');
    await page.keyboard.press('Tab');
    await page.keyboard.type('You can pick it up tomorrow.');
    await assertAccessible(page);
    await screenshot(page, 'panel-new-conversation-en-1280');
    const before = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const first = (await sink.waitFor(before + 1))[before];
    assert.equal(first.parsed.subject, 'Your order is ready');
    assert.deepEqual(first.to, ['nora@new.example']);
    await page.getByRole('heading', { name: 'Your order is ready' }).waitFor();
    assert.match(page.url(), /\/conversations\/cv_/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('tr, phone: the İlet button and a contact’s “… kişisine yaz” with the keyboard', async () => {
    const { conversation_id: id } = await deliverMail(
      s,
      address,
      { From: 'Deniz <deniz@musteri.example>', Subject: 'Fatura', 'Message-ID': '<e2e-f2@musteri.example>' },
      'Faturada hata var.',
    );
    const { context, page, errors } = await memberPage(ayse.token, 'tr-TR', { width: 390, height: 844 });
    await page.goto(`${s.url}/conversations/${id}`);
    await page.locator('.msg-body', { hasText: 'Faturada hata var.' }).waitFor();
    const button = page.locator('.msg').first().getByRole('button', { name: 'İlet' });
    await button.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'İlet: Fatura' });
    await dialog.waitFor();
    assert.equal(await focusedId(page), 'forward-to');
    await page.keyboard.type('muhasebe@ortak.example');
    await assertAccessible(page);
    await screenshot(page, 'panel-forward-tr-390');
    const count = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.parsed.subject, 'Fwd: Fatura');
    assert.deepEqual(mail.to, ['muhasebe@ortak.example']);
    await page.locator('.msg.out .badge', { hasText: 'İletildi' }).waitFor();

    // From the contact's card: "Deniz kişisine yaz" opens the composer with To filled, the subject focused.
    const contactId = (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.contact_id;
    await page.goto(`${s.url}/contacts/${contactId}`);
    const write = page.getByRole('link', { name: 'Deniz kişisine yaz' });
    await write.focus();
    await page.keyboard.press('Enter');
    const compose = page.getByRole('dialog', { name: 'Yeni konuşma' });
    await compose.waitFor();
    await page.waitForFunction(() => (document.getElementById('new-to') as HTMLInputElement | null)?.value === 'Deniz <deniz@musteri.example>');
    assert.equal(await focusedId(page), 'new-subject');
    await page.keyboard.type('Düzeltilmiş fatura');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Yeni faturanız ektedir.');
    await assertAccessible(page);
    await screenshot(page, 'panel-new-conversation-tr-390');
    const before = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const first = (await sink.waitFor(before + 1))[before];
    assert.equal(first.parsed.subject, 'Düzeltilmiş fatura');
    assert.deepEqual(first.to, ['deniz@musteri.example']);
    await page.getByRole('heading', { name: 'Düzeltilmiş fatura' }).waitFor();
    const started = (await s.request('GET', `/v1/conversations?contact_id=${contactId}`, { token: seed.apiKey })).body.data;
    assert.equal(started.length, 2, 'the new conversation belongs to the same contact');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
