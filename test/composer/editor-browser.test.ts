// The formatted composer in a real browser (issue 34): bold with Ctrl+B, italic with the toolbar,
// a link with Ctrl+K, lists, code and a quote with Markdown shortcuts typed as you go; the mail the
// customer's server receives has both parts exactly as expected. In English on a desktop window and
// in Turkish at phone width, keyboard alone apart from the toolbar checks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, ingressPort, SINK_LOGIN, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

/** A 1×1 PNG. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('the formatted composer', { skip: browserSkipReason() }, () => {
  let sink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
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

  async function openConversation(locale: string, viewport: { width: number; height: number }, subject: string) {
    await sendToIngress(ingressPort(s), {
      from: 'Ana Lima <ana@customer.example>',
      to: address,
      subject,
      text: `About ${subject}`,
      messageId: `<${subject.replace(/\W/g, '')}@customer.example>`,
    });
    const { context, page } = await browser.newPage({ viewport, locale });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations`);
    await page
      .getByRole('link', { name: new RegExp(subject) })
      .first()
      .click();
    await page.waitForURL(/\/conversations\/cv_/);
    await page.getByRole('article', { name: 'Ana Lima' }).getByText(`About ${subject}`).waitFor();
    // The editor is loaded when the conversation opens (a plain box takes keys until then).
    await page.locator('#composer-body[contenteditable="true"]').waitFor();
    return { context, page, errors };
  }

  test('toolbar, keys and Markdown shortcuts arrive as html and exact plain text (en, desktop)', async () => {
    const { context, page, errors } = await openConversation('en-US', { width: 1280, height: 800 }, 'Setup help');
    await page.keyboard.press('r');
    const kb = page.keyboard;
    await kb.type('Hello ');
    await kb.press('Control+b');
    await kb.type('Ana');
    await kb.press('Control+b');
    await kb.type(', this is ');
    await page.getByRole('button', { name: 'Italic' }).click();
    await kb.type('really');
    await page.getByRole('button', { name: 'Italic' }).click();
    await kb.type(' easy, see ');
    await kb.press('Control+k');
    await page.getByLabel('Link address').waitFor();
    await kb.type('docs.example/setup');
    await kb.press('Enter');
    await kb.type('.');
    await kb.press('Enter');
    await kb.type('- first **step**');
    await kb.press('Enter');
    await kb.type('second');
    await kb.press('Enter');
    await kb.press('Enter');
    await kb.type('1. one');
    await kb.press('Enter');
    await kb.type('two');
    await kb.press('Enter');
    await kb.press('Enter');
    await kb.type('Run `npm ci` now');
    await kb.press('Enter');
    await kb.type('> quoted words');
    const editor = page.locator('#composer-body');
    await editor.locator('strong', { hasText: 'step' }).waitFor();
    await editor.locator('blockquote', { hasText: 'quoted words' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Quote' }).getAttribute('aria-pressed'), 'true');
    await assertAccessible(page);
    await screenshot(page, 'composer-formatted');

    const count = sink.messages.length;
    await kb.press('Control+Enter');
    const [mail] = (await sink.waitFor(count + 1)).slice(count);
    assert.deepEqual(mail.to, ['ana@customer.example']);
    assert.match(mail.raw.toString('utf8'), /^Content-Type: multipart\/alternative;/im);
    assert.equal(
      mail.parsed.text!.replace(/\r\n/g, '\n').trimEnd(),
      [
        'Hello Ana, this is really easy, see https://docs.example/setup.',
        '',
        '- first step',
        '- second',
        '',
        '1. one',
        '2. two',
        '',
        'Run npm ci now',
        '',
        '> quoted words',
      ].join('\n'),
    );
    const html = String(mail.parsed.html);
    assert.match(
      html,
      /<p>Hello <strong>Ana<\/strong>, this is <em>really<\/em> easy, see <a [^>]*href="https:\/\/docs\.example\/setup"[^>]*>https:\/\/docs\.example\/setup<\/a>\.<\/p>/,
    );
    assert.match(html, /<ul><li><p>first <strong>step<\/strong><\/p><\/li><li><p>second<\/p><\/li><\/ul>/);
    assert.match(html, /<ol><li><p>one<\/p><\/li><li><p>two<\/p><\/li><\/ol>/);
    assert.match(html, /<p>Run <code>npm ci<\/code> now<\/p><blockquote><p>quoted words<\/p><\/blockquote>/);
    // Sent: the box is empty again, and the conversation shows the plain text.
    await page.getByRole('article', { name: 'You' }).getByText('Hello Ana, this is really easy').waitFor();
    assert.equal(await editor.textContent(), '');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('Turkish at phone width: the toolbar speaks Turkish and **kalın** becomes bold', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const { context, page, errors } = await openConversation('tr-TR', { width: 390, height: 844 }, 'Telefon');
      await page.getByRole('toolbar', { name: 'Biçimlendirme' }).waitFor();
      for (const name of ['Kalın', 'İtalik', 'Bağlantı', 'Madde işaretli liste', 'Numaralı liste', 'Alıntı', 'Satır içi kod']) {
        await page.getByRole('button', { name, exact: true }).waitFor();
      }
      await page.locator('#composer-body').focus();
      await page.keyboard.type('Merhaba **kalın** yazı');
      await page.keyboard.press('Enter');
      await page.keyboard.type('- madde');
      await assertAccessible(page);
      await screenshot(page, 'composer-formatted-tr-phone');
      const count = sink.messages.length;
      await page.keyboard.press('Control+Enter');
      const [mail] = (await sink.waitFor(count + 1)).slice(count);
      assert.equal(mail.parsed.text!.replace(/\r\n/g, '\n').trimEnd(), 'Merhaba kalın yazı\n\n- madde');
      assert.match(String(mail.parsed.html), /<p>Merhaba <strong>kalın<\/strong> yazı<\/p><ul><li><p>madde<\/p><\/li><\/ul>/);
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });

  test('a pasted screenshot goes out in place (cid:, multipart/related) and shows in the sent reply', async () => {
    const { context, page, errors } = await openConversation('en-US', { width: 1280, height: 800 }, 'Screenshot');
    await page.keyboard.press('r');
    await page.keyboard.type('Look here: ');
    // A 1×1 PNG on the clipboard, as a screenshot tool leaves it (a file, no text).
    await page.evaluate((b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
      document.querySelector('#composer-body')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, PNG_1X1);
    const pasted = page.locator('#composer-body img[src^="/v1/attachments/"]');
    await pasted.waitFor();
    assert.ok(await pasted.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth === 1), 'the picture shows in the editor');
    // In the text, not in the attachment list.
    assert.equal(await page.getByRole('list', { name: 'Attachments' }).count(), 0);
    await page.keyboard.type(' thanks');
    const count = sink.messages.length;
    await page.keyboard.press('Control+Enter');
    const [mail] = (await sink.waitFor(count + 1)).slice(count);
    assert.match(mail.raw.toString('utf8'), /Content-Type: multipart\/related;/i);
    const part = mail.parsed.attachments.find((a) => a.contentType === 'image/png');
    assert.ok(part?.cid, 'the picture is an inline part with a Content-ID');
    assert.ok(part.content.equals(Buffer.from(PNG_1X1, 'base64')));
    assert.equal(part.related, true);
    // mailparser puts each cid: reference's part in its place as a data: URL: the text points at it.
    const html = String(mail.parsed.html);
    assert.ok(html.includes(`<img src="data:image/png;base64,${PNG_1X1}" alt="image.png"`), html);
    assert.ok(!mail.raw.toString('utf8').includes('/v1/attachments/'), 'no panel URL in the mail');
    // The panel's own view of the sent mail shows the picture in place, not as a file.
    await page.getByRole('article', { name: 'You' }).filter({ hasText: 'Look here' }).waitFor();
    // A draft save on its way when Send was pressed does not bring the draft back after the send.
    const conversationId = page.url().split('/').pop()!;
    assert.equal((await s.app.db.selectFrom('drafts').select('html').where('conversation_id', '=', conversationId).execute()).length, 0);
    // (Its text is inside the frame once it shows formatted: found by place, not by text.)
    const sent = page.getByRole('article', { name: 'You' }).last();
    await sent.getByRole('button', { name: 'Show formatted' }).click();
    const shown = sent.frameLocator('iframe.mail-frame').locator('img');
    await shown.waitFor({ state: 'attached' });
    await shown.evaluate((img: HTMLImageElement) => (img.complete ? null : new Promise((r) => img.addEventListener('load', r, { once: true }))));
    assert.equal(await shown.evaluate((img: HTMLImageElement) => `${img.naturalWidth} ${img.getAttribute('src')!.slice(0, 22)}`), '1 data:image/png;base64,');
    assert.equal(await sent.getByRole('link', { name: /image\.png/ }).count(), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a draft typed in one browser comes back in another of the same member; a teammate is told', async () => {
    const first = await openConversation('en-US', { width: 1280, height: 800 }, 'Draft travel');
    const conversationUrl = first.page.url();
    await first.page.keyboard.press('r');
    await first.page.keyboard.type('Half done, **really**');
    // Saved on the server as you type (debounced): wait for the row, not for a time.
    for (let i = 0; ; i++) {
      const row = await s.app.db.selectFrom('drafts').select('html').where('person_id', '=', seed.ownerId).executeTakeFirst();
      if (row?.html.includes('<strong>really</strong>')) break;
      assert.ok(i < 200, 'the draft reached the server');
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.context.close();

    // Another browser (no local storage) of the same member.
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(conversationUrl);
    await page.locator('#composer-body[contenteditable="true"] strong', { hasText: 'really' }).waitFor();
    assert.equal(await page.locator('#composer-body').textContent(), 'Half done, really');
    assert.deepEqual(errors, []);
    await context.close();

    // A teammate opening the conversation is told before starting a second answer.
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const mate = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await mate.context.addCookies([{ name: 'svc_session', value: agent.token, url: s.url }]);
    await mate.page.goto(conversationUrl);
    await mate.page.getByRole('status').filter({ hasText: 'has a draft reply here. Check before you answer.' }).waitFor();
    await assertAccessible(mate.page);
    await mate.context.close();
  });
});
