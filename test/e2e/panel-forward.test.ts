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

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A 1×1 PNG pasted into the editor at `selector`, as a screenshot tool leaves it; waits until it shows in place. */
async function pastePicture(page: import('playwright-core').Page, selector: string) {
  await page.evaluate(
    ([b64, at]) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'shot.png', { type: 'image/png' }));
      document.querySelector(at)?.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    },
    [PNG_1X1, selector] as const,
  );
  await page.locator(`${selector} img[src^="/v1/attachments/"]`).waitFor();
}

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
    // The note is formatted text: its toolbar (one stop, arrows move within it), then the text.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Bold');
    await page.keyboard.press('Tab');
    assert.equal(await focusedId(page), 'forward-note');
    await page.keyboard.type('Can you repair this one?');
    await pastePicture(page, '#forward-note');
    await assertAccessible(page);
    await screenshot(page, 'panel-forward-en-1280');
    const count = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.parsed.subject, 'Fwd: Broken hinge');
    assert.deepEqual([...mail.to].sort(), ['lead@partner.example', 'repairs@partner.example']);
    assert.match(mail.parsed.text ?? '', /^Can you repair this one\?/);
    assert.match(mail.parsed.text ?? '', /From: Ann <ann@cust\.example>/);
    const shot = mail.parsed.attachments.find((a) => a.related);
    assert.ok(shot?.cid && shot.content.equals(Buffer.from(PNG_1X1, 'base64')), 'the picture pasted into the note is an inline part');
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

  test('undo send and files: a held new conversation (files by button and by drop) and a held forward come back as they were; nothing is mailed until sent', async () => {
    for (const token of [seed.ownerToken, ayse.token]) {
      const r = await s.request('PATCH', '/v1/me', { token, body: { undo_send_seconds: 60 } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const { context, page, errors } = await memberPage(seed.ownerToken, 'en-US', { width: 1280, height: 800 });
    await page.goto(`${s.url}/conversations`);
    await page.getByRole('button', { name: 'New conversation' }).waitFor();
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('c');
    const compose = page.getByRole('dialog', { name: 'New conversation' });
    await compose.waitFor();
    await page.keyboard.type('Pia Berg <pia@new.example>');
    await page.locator('#new-subject').fill('Your quote');
    await page.locator('#new-body').fill('The quote is attached.');
    // A screenshot pasted into the text goes in place (an inline part), not among the files.
    await page.locator('#new-body').focus();
    await page.keyboard.press('End');
    await pastePicture(page, '#new-body');
    // A file chosen with the Attach button, and one dropped on the dialog.
    await page.locator('#new-files').setInputFiles({ name: 'quote.txt', mimeType: 'text/plain', buffer: Buffer.from('Quote: 120 EUR') });
    const files = compose.getByRole('list', { name: 'Files to send' });
    await files.getByText('quote.txt').waitFor();
    const dropped = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['a,b\n1,2\n'], 'prices.csv', { type: 'text/csv' }));
      return dt;
    });
    await compose.locator('form').dispatchEvent('drop', { dataTransfer: dropped });
    await files.getByText('prices.csv').waitFor();
    assert.equal(await page.locator('#new-inbox').isDisabled(), true, 'the files belong to the chosen inbox');
    await assertAccessible(page);
    await screenshot(page, 'panel-new-conversation-files-en-1280');
    const count = sink.messages.length;
    await page.locator('#new-body').focus();
    await page.keyboard.press('Control+Enter');
    const undo = page.getByRole('button', { name: 'Undo' });
    await undo.waitFor();
    await page.getByRole('heading', { name: 'Your quote' }).waitFor();
    const held = await s.app.db.selectFrom('conversations').select('id').where('subject', '=', 'Your quote').execute();
    assert.equal(held.length, 1, 'held: the conversation is there for its author');
    await screenshot(page, 'panel-new-conversation-held-en-1280');
    await undo.focus();
    await page.keyboard.press('Enter');
    // The dialog opens again as it was sent, files and all; the conversation is gone.
    await compose.waitFor();
    await page.waitForFunction(() => (document.getElementById('new-to') as HTMLInputElement | null)?.value === 'Pia Berg <pia@new.example>');
    assert.equal(await page.locator('#new-subject').inputValue(), 'Your quote');
    assert.equal((await page.locator('#new-body').innerText()).trim(), 'The quote is attached.');
    await files.getByText('quote.txt').waitFor();
    await files.getByText('prices.csv').waitFor();
    await page.waitForURL((u) => u.pathname === '/conversations');
    assert.deepEqual(await s.app.db.selectFrom('conversations').select('id').where('subject', '=', 'Your quote').execute(), []);
    await page.locator('.list-pane').getByText('Your quote').waitFor({ state: 'detached' });
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, count, 'the smtp sink stays empty');

    // Sent again: held as before; moved to now, it goes once with both files.
    await page.locator('#new-body').focus();
    await page.keyboard.press('Control+Enter');
    await page.getByRole('heading', { name: 'Your quote' }).waitFor();
    const again = await s.app.db.selectFrom('messages').select(['id', 'conversation_id']).where('subject', '=', 'Your quote').executeTakeFirstOrThrow();
    const soon = new Date(Date.now() + 1000).toISOString();
    const moved = await s.request('PATCH', `/v1/conversations/${again.conversation_id}/messages/${again.id}/schedule`, {
      token: seed.apiKey,
      body: { send_at: soon },
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const mail = (await sink.waitFor(count + 1))[count];
    assert.equal(mail.parsed.subject, 'Your quote');
    assert.deepEqual(mail.to, ['pia@new.example']);
    assert.deepEqual(
      mail.parsed.attachments
        .filter((a) => !a.related)
        .map((a) => [a.filename, a.content.toString()])
        .sort(),
      [
        ['prices.csv', 'a,b\n1,2\n'],
        ['quote.txt', 'Quote: 120 EUR'],
      ],
    );
    const shot = mail.parsed.attachments.find((a) => a.related);
    assert.ok(shot?.cid && shot.content.equals(Buffer.from(PNG_1X1, 'base64')), 'the pasted picture is an inline part');
    assert.match(mail.raw.toString('utf8'), /Content-Type: multipart\/related;/i);
    assert.deepEqual(errors, []);
    await context.close();

    // A held forward in Turkish at phone width: Geri al opens İlet again as it was; nothing is mailed.
    const { conversation_id: id } = await deliverMail(
      s,
      address,
      { From: 'Ece <ece@musteri.example>', Subject: 'Kargo', 'Message-ID': '<e2e-f3@musteri.example>' },
      'Kargom gelmedi.',
    );
    const phone = await memberPage(ayse.token, 'tr-TR', { width: 390, height: 844 });
    await phone.page.goto(`${s.url}/conversations/${id}`);
    await phone.page.locator('.msg-body', { hasText: 'Kargom gelmedi.' }).waitFor();
    await phone.page.locator('body').click({ position: { x: 5, y: 5 } });
    await phone.page.keyboard.press('f');
    const dialog = phone.page.getByRole('dialog', { name: 'İlet: Kargo' });
    await dialog.waitFor();
    await phone.page.keyboard.type('depo@ortak.example');
    await phone.page.locator('#forward-note').fill('Lütfen kontrol edin.');
    const before = sink.messages.length;
    await phone.page.locator('#forward-note').focus();
    await phone.page.keyboard.press('Control+Enter');
    const geriAl = phone.page.getByRole('button', { name: 'Geri al' });
    await geriAl.waitFor();
    await phone.page.locator('.msg.out').filter({ hasText: 'Lütfen kontrol edin.' }).waitFor();
    await geriAl.focus();
    await phone.page.keyboard.press('Enter');
    await dialog.waitFor();
    await phone.page.waitForFunction(() => (document.getElementById('forward-to') as HTMLInputElement | null)?.value === 'depo@ortak.example');
    assert.equal((await phone.page.locator('#forward-note').innerText()).trim(), 'Lütfen kontrol edin.');
    await phone.page.locator('.msg.out').filter({ hasText: 'Lütfen kontrol edin.' }).waitFor({ state: 'detached' });
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
    await assertAccessible(phone.page);
    await screenshot(phone.page, 'panel-forward-undone-tr-390');
    await phone.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing mailed');
    assert.deepEqual(await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', id).where('direction', '=', 'out').execute(), []);
    // Sonra gönder: the quick times open under the form; the first schedules the forward for then.
    await phone.page.locator('body').click({ position: { x: 5, y: 5 } });
    await phone.page.keyboard.press('f');
    await dialog.waitFor();
    await phone.page.keyboard.type('depo@ortak.example');
    const laterButton = dialog.getByRole('button', { name: 'Sonra gönder' });
    await laterButton.focus();
    await phone.page.keyboard.press('Enter');
    assert.equal(await laterButton.getAttribute('aria-expanded'), 'true');
    await screenshot(phone.page, 'panel-forward-later-tr-390');
    const firstChoice = dialog.locator('#forward-later .snooze-choice').first();
    await firstChoice.focus();
    await phone.page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    const [scheduled] = await s.app.db
      .selectFrom('messages')
      .select(['delivery_status', 'send_at'])
      .where('conversation_id', '=', id)
      .where('direction', '=', 'out')
      .execute();
    assert.equal(scheduled?.delivery_status, 'scheduled');
    assert.ok(scheduled?.send_at && new Date(scheduled.send_at).getTime() > Date.now() + 60_000, 'scheduled for the chosen time, not the undo delay');
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, before, 'nothing mailed before its time');
    assert.deepEqual(phone.errors, []);
    await phone.context.close();
    for (const token of [seed.ownerToken, ayse.token]) await s.request('PATCH', '/v1/me', { token, body: { undo_send_seconds: 0 } });
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
    // The message is formatted text: its toolbar is one Tab stop, the text the next.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Kalın');
    await page.keyboard.press('Tab');
    assert.equal(await focusedId(page), 'new-body');
    await page.keyboard.type('Yeni faturanız ektedir.');
    await assertAccessible(page);
    await screenshot(page, 'panel-new-conversation-tr-390');
    const before = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const first = (await sink.waitFor(before + 1))[before];
    assert.equal(first.parsed.subject, 'Düzeltilmiş fatura');
    assert.deepEqual(first.to, ['deniz@musteri.example']);
    assert.match(first.parsed.text ?? '', /^Yeni faturanız ektedir\./);
    assert.doesNotMatch(String(first.parsed.html), /<strong>/, 'typed as plain text');
    await page.getByRole('heading', { name: 'Düzeltilmiş fatura' }).waitFor();
    const started = (await s.request('GET', `/v1/conversations?contact_id=${contactId}`, { token: seed.apiKey })).body.data;
    assert.equal(started.length, 2, 'the new conversation belongs to the same contact');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
