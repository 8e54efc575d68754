// Issue 33 in the panel: the To/Cc/Bcc lines above the reply show where it goes (reply-all) and are
// edited with the keyboard alone; the mail reaches exactly those addresses (smtp-server sink), the
// sent message shows its recipients (Bcc to the team only), the participants are listed and
// editable in the details, and a thread joiner is offered as a participant. Grace in English on a
// desktop, Ayşe in Turkish at phone width; axe on each.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('recipients in the panel', { skip: browserSkipReason() }, () => {
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

  test('the reply shows To and Cc (reply-all); edited with the keyboard, it goes exactly there; Bcc stays hidden', async () => {
    const { conversation_id: id } = await deliverMail(
      s,
      address,
      {
        From: 'Ann <ann@cust.example>',
        Cc: 'Bob <bob@cust.example>, Carol <carol@cust.example>',
        Subject: 'Invoice copy',
        'Message-ID': '<e2e-r1@cust.example>',
      },
      'Please send the invoice to all of us.',
    );
    const grace = await memberPage(seed.ownerToken, 'en-US', { width: 1280, height: 860 });
    const { page } = grace;
    await page.goto(`${s.url}/conversations/${id}`);
    await page.getByRole('heading', { name: 'Invoice copy' }).waitFor();
    const to = page.getByRole('textbox', { name: 'To', exact: true });
    const cc = page.getByRole('textbox', { name: 'Cc', exact: true });
    const bcc = page.getByRole('textbox', { name: 'Bcc', exact: true });
    await page.waitForFunction(() => (document.getElementById('recipients-to') as HTMLInputElement | null)?.value !== '');
    assert.equal(await to.inputValue(), 'Ann <ann@cust.example>');
    assert.equal(await cc.inputValue(), 'Bob <bob@cust.example>, Carol <carol@cust.example>');
    // An empty Bcc folds behind the Cc/Bcc button; Cc shows because reply-all fills it.
    assert.equal(await bcc.count(), 0);
    // The participants in the details.
    const participants = page.getByRole('list', { name: 'Participants' });
    for (const p of ['Ann <ann@cust.example>', 'Bob <bob@cust.example>', 'Carol <carol@cust.example>']) await participants.getByText(p).waitFor();
    await assertAccessible(page);

    // Keyboard alone: r to write, Shift+Tab up to Cc and the Cc/Bcc button, open Bcc, edit, Tab
    // back, write, Ctrl+Enter.
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('r');
    await page.keyboard.type('Here is the invoice.');
    // Up past the formatting toolbar (one Tab stop) to Cc, then the button that opens Bcc.
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.closest('[role="toolbar"]') !== null), true, 'the toolbar is one stop');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'recipients-cc');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cc/Bcc');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'recipients-bcc');
    await page.keyboard.type('Ledger <books@acme-accounting.example>');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'recipients-cc');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Bob <bob@cust.example>');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'composer-body');
    const count = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const mail = (await sink.waitFor(count + 1))[count];
    assert.deepEqual([...mail.to].sort(), ['ann@cust.example', 'bob@cust.example', 'books@acme-accounting.example']);
    assert.ok(!mail.raw.toString().includes('books@acme-accounting.example'), 'Bcc in the envelope only');
    assert.match(mail.parsed.text ?? '', /Here is the invoice\./);

    // The sent reply shows where it went, Bcc included (the team sees it).
    const sent = page.locator('.msg.out').filter({ hasText: 'Here is the invoice.' });
    await sent
      .locator('.msg-recipients')
      .filter({ hasText: 'To: Ann <ann@cust.example> · Cc: Bob <bob@cust.example> · Bcc: Ledger <books@acme-accounting.example>' })
      .waitFor();
    // After sending, the lines show reply-all again (Carol is still a participant).
    await page.waitForFunction(() => (document.getElementById('recipients-cc') as HTMLInputElement | null)?.value.includes('carol@'));
    assert.equal(await bcc.inputValue(), '');

    // Removing Carol from the participants (keyboard: focus her × and press Enter) changes reply-all.
    await page.getByRole('button', { name: 'Remove carol@cust.example' }).focus();
    await page.keyboard.press('Enter');
    await participants.getByText('Carol <carol@cust.example>').waitFor({ state: 'detached' });
    // The chip goes at once (optimistic); the stored list follows when the PATCH is answered.
    let stored: string[] = [];
    for (let i = 0; i < 100; i++) {
      const conv = (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body;
      stored = conv.participants.map((p: { address: string }) => p.address);
      if (!stored.includes('carol@cust.example')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(stored, ['ann@cust.example', 'bob@cust.example']);
    assert.deepEqual(grace.errors, []);
    await grace.context.close();
  });

  test('a thread joiner is shown as its sender and offered as a participant (Turkish, phone width)', async () => {
    const first = await deliverMail(
      s,
      address,
      { From: 'Deniz <deniz@cust.example>', Subject: 'Kargo', 'Message-ID': '<e2e-r2@cust.example>' },
      'Kargom nerede?',
    );
    await deliverMail(
      s,
      address,
      { From: 'Ece Yabancı <ece@else.example>', Subject: 'Re: Kargo', 'In-Reply-To': '<e2e-r2@cust.example>' },
      'Ben de bekliyorum.',
    );
    const tab = await memberPage(ayse.token, 'tr-TR', { width: 390, height: 844 });
    const { page } = tab;
    await page.goto(`${s.url}/conversations/${first.conversation_id}`);
    await page.getByRole('heading', { name: 'Kargo' }).waitFor();
    const joiner = page.locator('.msg').filter({ hasText: 'Ben de bekliyorum.' });
    await joiner.locator('.author').filter({ hasText: 'Ece Yabancı <ece@else.example>' }).waitFor();
    await page.getByRole('textbox', { name: 'Kime', exact: true }).waitFor();
    await page.waitForFunction(() => (document.getElementById('recipients-to') as HTMLInputElement | null)?.value === 'Deniz <deniz@cust.example>');
    // Nothing to copy yet: Bilgi and Gizli fold behind one button.
    assert.equal(await page.getByRole('textbox', { name: 'Bilgi', exact: true }).count(), 0);
    assert.equal(await page.getByRole('textbox', { name: 'Gizli', exact: true }).count(), 0);
    await page.getByRole('button', { name: 'Bilgi/Gizli', exact: true }).waitFor();
    // Nothing wider than the phone's screen.
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1));
    await assertAccessible(page);

    const add = page.getByRole('button', { name: 'ece@else.example adresini katılımcı olarak ekle' });
    await add.focus();
    await page.keyboard.press('Enter');
    // Reply-all follows at once: Ece is in Cc now.
    await page.waitForFunction(() => (document.getElementById('recipients-cc') as HTMLInputElement | null)?.value === 'Ece Yabancı <ece@else.example>');
    const c = (await s.request('GET', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey })).body;
    assert.deepEqual(c.participants, [
      { name: 'Deniz', address: 'deniz@cust.example', role: 'to' },
      { name: 'Ece Yabancı', address: 'ece@else.example', role: 'cc' },
    ]);
    assert.deepEqual(tab.errors, []);
    await tab.context.close();
  });
});
