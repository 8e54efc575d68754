// Collision warnings in two browsers: Grace (English) and Ayşe (Turkish) open the same conversation.
// Each sees the other viewing and typing in the conversation's header (from the realtime stream),
// a reply is held back with a warning while the other is typing or after the other replied, "Not
// now" sends nothing, "Send anyway" sends, and leaving the conversation takes the viewer away at
// once. axe on the conversation page with the warnings shown, in both languages.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('collision warnings in the panel', { skip: browserSkipReason() }, () => {
  let customerSink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;
  let ayse: { personId: string; token: string };

  before(async () => {
    customerSink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed, { smtpPort: customerSink.port })).address!;
    ayse = await addPerson(s.app, seed.workspaceId, 'agent');
    // Names and languages through the API, as each person would set them in My account.
    assert.equal((await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { name: 'Grace', locale: 'en' } })).status, 200);
    assert.equal((await s.request('PATCH', '/v1/me', { token: ayse.token, body: { name: 'Ayşe', locale: 'tr' } })).status, 200);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await customerSink?.close();
  });

  async function memberPage(token: string, locale: string) {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale });
    await context.addCookies([{ name: 'svc_session', value: token, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
    return { context, page, errors };
  }
  const presence = (page: Page) => page.locator('.presence-line');
  const replies = async (conversationId: string) =>
    (await s.request('GET', `/v1/conversations/${conversationId}/messages?limit=200`, { token: seed.apiKey })).body.data.filter(
      (m: any) => m.kind === 'message' && m.direction === 'out',
    );

  test('viewing and typing show in the header; a reply waits for a second look; leaving is seen at once', async () => {
    const { conversation_id: id } = await deliverMail(
      s,
      address,
      { From: 'Customer <buyer@cust.example>', Subject: 'Broken charger' },
      'My charger stopped working.',
    );
    const grace = await memberPage(seed.ownerToken, 'en-US');
    const ayseTab = await memberPage(ayse.token, 'tr-TR');

    await ayseTab.page.goto(`${s.url}/conversations/${id}`);
    await ayseTab.page.getByRole('heading', { name: 'Broken charger' }).waitFor();
    await grace.page.goto(`${s.url}/conversations/${id}`);
    await grace.page.getByRole('heading', { name: 'Broken charger' }).waitFor();

    // Each sees the other viewing: Ayşe from Grace's signal on the stream, Grace (who came second)
    // from the answer to her own signal, without waiting for Ayşe's next one.
    await presence(ayseTab.page).filter({ hasText: 'Grace görüntülüyor' }).waitFor();
    await presence(grace.page).filter({ hasText: 'Ayşe is viewing' }).waitFor({ timeout: 5_000 });
    await assertAccessible(grace.page);

    // Ayşe writes a reply: Grace sees her typing, and Grace's own reply waits with a warning.
    await ayseTab.page.getByRole('textbox', { name: 'Yanıt', exact: true }).fill('Merhaba, yeni bir şarj aleti gönderiyoruz.');
    await presence(grace.page).filter({ hasText: 'Ayşe is typing a reply…' }).waitFor();
    const graceBox = grace.page.getByRole('textbox', { name: 'Reply', exact: true });
    await graceBox.fill('Hello, we are sending a new charger.');
    await grace.page.getByRole('button', { name: 'Send', exact: true }).click();
    const typingWarning = grace.page.getByRole('alert').filter({ hasText: 'Ayşe is writing a reply right now. Send yours anyway?' });
    await typingWarning.waitFor();
    await assertAccessible(grace.page);
    await grace.page.getByRole('button', { name: 'Not now' }).click();
    await typingWarning.waitFor({ state: 'detached' });
    assert.equal(await graceBox.textContent(), 'Hello, we are sending a new charger.', 'the draft stays');
    assert.equal((await replies(id)).length, 0, '"Not now" sends nothing');

    // Ayşe sends: Grace was typing moments ago, so she is asked too (in Turkish), and sends anyway.
    // Grace touches her draft first: a typing signal is shown for 6 s, and the checks above can take
    // longer than that on a loaded machine.
    await graceBox.press('End');
    await graceBox.pressSequentially('x');
    await graceBox.press('Backspace');
    await presence(ayseTab.page).filter({ hasText: 'Grace yanıt yazıyor…' }).waitFor();
    await ayseTab.page.getByRole('button', { name: 'Gönder', exact: true }).click();
    await ayseTab.page.getByRole('alert').filter({ hasText: 'Grace şu anda bir yanıt yazıyor. Sizinki yine de gönderilsin mi?' }).waitFor();
    await assertAccessible(ayseTab.page);
    await ayseTab.page.getByRole('button', { name: 'Yine de gönder' }).click();
    await ayseTab.page.locator('.msg.out').filter({ hasText: 'yeni bir şarj aleti' }).waitFor();

    // Grace sees the reply arrive and her typing hint for Ayşe go; sending now warns that Ayşe replied.
    await grace.page.locator('.msg.out').filter({ hasText: 'yeni bir şarj aleti' }).waitFor();
    await presence(grace.page).filter({ hasText: 'Ayşe is typing' }).waitFor({ state: 'detached' });
    await grace.page.getByRole('button', { name: 'Send', exact: true }).click();
    await grace.page.getByRole('alert').filter({ hasText: 'Ayşe replied while you had this conversation open. Send yours anyway?' }).waitFor();
    await grace.page.getByRole('button', { name: 'Send anyway' }).click();
    await grace.page.locator('.msg.out').filter({ hasText: 'we are sending a new charger' }).waitFor();
    const sent = await replies(id);
    assert.deepEqual(sent.map((m: any) => m.body.split('\n')[0]).sort(), [
      'Hello, we are sending a new charger.',
      'Merhaba, yeni bir şarj aleti gönderiyoruz.',
    ]);

    // Ayşe closes the conversation: Grace stops seeing her at once (the leave signal), long before
    // the 50 s a viewing signal lasts.
    await ayseTab.page
      .getByRole('link', { name: /Broken charger/ })
      .first()
      .waitFor();
    await ayseTab.page.goto(`${s.url}/conversations`);
    // Gone on the "left" signal: without it the last one would stay shown for 50 s.
    await presence(grace.page).filter({ hasText: 'Ayşe' }).waitFor({ state: 'detached', timeout: 20_000 });

    // Viewing and typing signals never became messages of the conversation.
    const all = (await s.request('GET', `/v1/conversations/${id}/messages?limit=200`, { token: seed.apiKey })).body.data;
    assert.equal(all.filter((m: any) => m.kind === 'event' && /view|typing/i.test(JSON.stringify(m.details ?? ''))).length, 0);
    assert.deepEqual([...grace.errors, ...ayseTab.errors], []);
    await grace.context.close();
    await ayseTab.context.close();
  });
});
