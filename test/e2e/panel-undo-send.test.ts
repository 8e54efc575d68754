// Undo send in the panel (issue 34): a reply is held for the member's delay with a "Sending… Undo"
// toast; Undo (keyboard alone) cancels it, nothing reaches the smtp sink, and the text is back in
// the composer. A held reply is shown in the conversation with its time and a Cancel button (Ayşe,
// Turkish, phone width). Send later, keyboard alone: "Tomorrow" stores the reply as scheduled for
// 09:00 tomorrow on the member's clock (a zone set on the browser), shown with Cancel; nothing is
// mailed. The delay is set to 60 s so the test never races the real clock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('undo send in the panel', { skip: browserSkipReason() }, () => {
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
    for (const [token, name, locale] of [
      [seed.ownerToken, 'Grace', 'en'],
      [ayse.token, 'Ayşe', 'tr'],
    ]) {
      const r = await s.request('PATCH', '/v1/me', { token, body: { name, locale, undo_send_seconds: 60 } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await sink?.close();
  });

  async function memberPage(token: string, locale: string, viewport: { width: number; height: number }, timezoneId?: string) {
    const { context, page } = await browser.newPage({ viewport, locale, timezoneId });
    await context.addCookies([{ name: 'svc_session', value: token, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    return { context, page, errors };
  }

  test('en: Sending… Undo brings the reply back into the composer; nothing is mailed', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'Ann <ann@cust.example>', Subject: 'Refund please' }, 'Where is my refund?');
    const { page, errors } = await memberPage(seed.ownerToken, 'en-US', { width: 1280, height: 860 });
    await page.goto(`${s.url}/conversations/${id}`);
    await page.getByRole('heading', { name: 'Refund please' }).waitFor();
    await page.waitForFunction(() => (document.getElementById('recipients-to') as HTMLInputElement | null)?.value !== '');
    const count = sink.messages.length;
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('r');
    await page.keyboard.type('The refund went out today.');
    await page.keyboard.press('Control+Enter');
    const undo = page.getByRole('button', { name: 'Undo' });
    await undo.waitFor();
    await page.getByText('Sending…').first().waitFor();
    await page.getByText(/^Scheduled for /).waitFor();
    await screenshot(page, 'undo-send-en');
    await undo.focus();
    await page.keyboard.press('Enter');
    await undo.waitFor({ state: 'detached' });
    await page.getByText(/^Scheduled for /).waitFor({ state: 'detached' });
    await page.locator('#composer-body').getByText('The refund went out today.').waitFor();
    await screenshot(page, 'undo-send-en-undone');
    const stored = await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', id).where('direction', '=', 'out').execute();
    assert.deepEqual(stored, [], 'the held reply is gone');
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count, 'the smtp sink stays empty');
    assert.deepEqual(errors, []);
  });

  test('tr, phone width: a held reply shows its time and İptal et puts the text back', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'Bora <bora@cust.example>', Subject: 'Fatura' }, 'Faturamı alamadım.');
    const { page, errors } = await memberPage(ayse.token, 'tr-TR', { width: 390, height: 844 });
    await page.goto(`${s.url}/conversations/${id}`);
    await page.getByRole('heading', { name: 'Fatura' }).waitFor();
    await page.waitForFunction(() => (document.getElementById('recipients-to') as HTMLInputElement | null)?.value !== '');
    const count = sink.messages.length;
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('r');
    await page.keyboard.type('Faturanız yolda.');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('button', { name: 'Geri al' }).waitFor();
    const cancel = page.getByRole('button', { name: 'İptal et' });
    await page.getByText(/için zamanlandı/).waitFor();
    await assertAccessible(page);
    await screenshot(page, 'undo-send-tr-phone');
    await cancel.focus();
    await page.keyboard.press('Enter');
    await page.getByText(/için zamanlandı/).waitFor({ state: 'detached' });
    await page.locator('#composer-body').getByText('Faturanız yolda.').waitFor();
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count);
    assert.deepEqual(errors, []);
  });

  test('en: Send later → Tomorrow holds the reply until 09:00 tomorrow on the member’s clock', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'Cem <cem@cust.example>', Subject: 'Invoice copy' }, 'Could you resend it?');
    const zone = 'Asia/Tokyo';
    const { page, errors } = await memberPage(seed.ownerToken, 'en-US', { width: 1280, height: 860 }, zone);
    await page.goto(`${s.url}/conversations/${id}`);
    await page.getByRole('heading', { name: 'Invoice copy' }).waitFor();
    await page.waitForFunction(() => (document.getElementById('recipients-to') as HTMLInputElement | null)?.value !== '');
    const count = sink.messages.length;
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('r');
    await page.keyboard.type('Here it is again.');
    const later = page.getByRole('button', { name: 'Send later' });
    await later.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Send later' });
    await dialog.waitFor();
    await assertAccessible(page);
    // Kept back if the customer writes first: chosen with the keyboard before the time.
    const unless = dialog.getByRole('checkbox', { name: /^Unless the customer answers first/ });
    await unless.focus();
    await page.keyboard.press('Space');
    assert.equal(await unless.isChecked(), true);
    await dialog.getByRole('button', { name: /^Tomorrow/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByText(/^Reply scheduled: /).waitFor();
    await page.getByText(/^Scheduled for .* · unless the customer writes first/).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).waitFor();
    await screenshot(page, 'send-later-en');
    const [held] = await s.app.db
      .selectFrom('messages')
      .select(['delivery_status', 'send_at', 'details'])
      .where('conversation_id', '=', id)
      .where('direction', '=', 'out')
      .execute();
    assert.equal(held.delivery_status, 'scheduled');
    assert.equal(JSON.parse(held.details!).unless_customer_replies, true);
    // 09:00 tomorrow in Tokyo (UTC+9, no DST): 00:00Z of Tokyo's tomorrow.
    const tokyoToday = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date());
    const tomorrow = new Date(`${tokyoToday}T00:00:00Z`).getTime() + 86_400_000;
    assert.equal(new Date(held.send_at!).toISOString(), new Date(tomorrow).toISOString());
    // Moved to another time with the keyboard: three days on, 10:00 in Tokyo.
    await page.getByRole('button', { name: 'Change time' }).focus();
    await page.keyboard.press('Enter');
    const move = page.getByRole('dialog', { name: 'Change time' });
    await move.waitFor();
    const day = new Date(tomorrow + 2 * 86_400_000).toISOString().slice(0, 10);
    await move.locator('input[type="datetime-local"]').fill(`${day}T10:00`);
    await move.getByRole('button', { name: 'Schedule', exact: true }).click();
    await move.waitFor({ state: 'detached' });
    for (let i = 0; ; i++) {
      const row = await s.app.db
        .selectFrom('messages')
        .select('send_at')
        .where('conversation_id', '=', id)
        .where('direction', '=', 'out')
        .executeTakeFirstOrThrow();
      if (row.send_at && new Date(row.send_at).toISOString() === `${day}T01:00:00.000Z`) break;
      assert.ok(i < 100, `moved to 10:00 Tokyo time, is ${row.send_at}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count, 'nothing mailed before its time');
    assert.deepEqual(errors, []);
  });
});
