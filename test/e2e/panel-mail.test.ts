// Reading and answering mail in the panel, in a real browser against a real server: sign in with a
// mailed code, mail arriving over SMTP appears live, a reply from the composer reaches the
// customer's mail server with threading headers, notes stay inside, keyboard shortcuts, search, a
// phone-sized window in Turkish, HTML mail in a sandboxed frame (remote images only when asked, a
// newsletter's inline banner), folded quotes and an image preview; no serious accessibility
// violations on any page. The scene: test/helpers/panel-scene.ts.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import type { Page } from 'playwright-core';
import { assertAccessible, browserSkipReason, screenshot } from '../helpers/browser.js';
import type { Seed } from '../helpers/fixtures.js';
import { ingressPort, sendToIngress } from '../helpers/mail.js';
import { type PanelScene, startPanelScene } from '../helpers/panel-scene.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('mail in the panel, in a browser', { skip: browserSkipReason() }, () => {
  let scene: PanelScene;
  let panelPage: PanelScene['panelPage'];
  let systemSink: SmtpSink;
  let customerSink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let ownerEmail: string;

  before(async () => {
    scene = await startPanelScene();
    ({ systemSink, customerSink, s, seed, address, ownerEmail, panelPage } = scene);
  });
  after(() => scene?.stop());

  async function signInThroughTheForm(page: Page, email: string) {
    await page.goto(`${s.url}/conversations`);
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Work e-mail').fill(email);
    const before = systemSink.messages.length;
    await page.getByRole('button', { name: 'Send code' }).click();
    const [mail] = (await systemSink.waitFor(before + 1)).slice(before);
    const code = /(\d{6})/.exec(mail.parsed.subject ?? '')![1];
    await page.getByLabel('Code from the e-mail').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/conversations/);
  }

  test('sign in, live mail, reply with threading, note, shortcuts and search', async () => {
    const { context, page, outside, errors } = await panelPage();
    await page.goto(`${s.url}/sign-in`);
    await assertAccessible(page);
    await signInThroughTheForm(page, ownerEmail);
    await page.getByRole('heading', { name: 'All' }).waitFor();
    await page.getByText('Nothing here').waitFor();
    await assertAccessible(page);

    // Mail over SMTP appears in the open panel without a reload.
    await sendToIngress(ingressPort(s), {
      from: 'Ada Lovelace <ada@customer.example>',
      to: address,
      subject: 'Invoice 4411 charged twice',
      text: 'My card was charged twice for invoice 4411.',
      messageId: '<ada-1@customer.example>',
    });
    const row = page.getByRole('link', { name: /Ada Lovelace/ });
    await row.waitFor({ timeout: 20_000 });
    assert.match((await row.getAttribute('class')) ?? '', /unread/);
    const nav = page.getByRole('navigation', { name: 'Menu' });
    await nav.getByRole('link', { name: 'All 1 unread' }).waitFor();
    await nav.getByRole('link', { name: 'Support 1 unread' }).waitFor();

    // Open it with the keyboard (j), reply with Ctrl+Enter.
    await page.keyboard.press('j');
    await page.waitForURL(/\/conversations\/cv_/);
    await page
      .getByRole('article', { name: /Ada Lovelace/ })
      .getByText('charged twice for invoice 4411')
      .waitFor();
    const original = await page
      .getByRole('article', { name: /Ada Lovelace/ })
      .getByRole('link', { name: 'Original e-mail' })
      .getAttribute('href');
    const raw = await context.request.get(s.url + original);
    assert.equal(raw.status(), 200);
    assert.match(await raw.text(), /Message-ID: <ada-1@customer\.example>/i);
    await nav.getByRole('link', { name: 'All', exact: true }).waitFor();
    await assertAccessible(page);
    await page.keyboard.press('r');
    await page.keyboard.type('We refunded the second charge.');
    const sent = customerSink.messages.length;
    await page.getByLabel('Attach files').setInputFiles({ name: 'refund.txt', mimeType: 'text/plain', buffer: Buffer.from('refund receipt') });
    await page.getByRole('list', { name: 'Files to send' }).getByText('refund.txt').waitFor();
    await page.locator('#composer-body').focus();
    await page.keyboard.press('Control+Enter');
    const [reply] = (await customerSink.waitFor(sent + 1)).slice(sent);
    assert.deepEqual(
      reply.parsed.attachments.map((a) => [a.filename, a.content.toString()]),
      [['refund.txt', 'refund receipt']],
    );
    assert.deepEqual(reply.to, ['ada@customer.example']);
    assert.equal(reply.parsed.inReplyTo, '<ada-1@customer.example>');
    assert.match(String(reply.parsed.references), /ada-1@customer\.example/);
    assert.match(reply.parsed.text ?? '', /We refunded the second charge\./);
    const mine = page.getByRole('article', { name: 'You' });
    await mine.getByText('We refunded the second charge.').waitFor();
    await mine.getByText('Sending…').waitFor({ state: 'detached' });

    // A note is shown as a note and never mailed.
    await page.keyboard.press('Escape');
    await page.keyboard.press('n');
    await page.keyboard.type('Refund id rf_991 for finance.');
    await page.keyboard.press('Control+Enter');
    await page
      .getByRole('article', { name: /^Note: You/ })
      .getByText('Refund id rf_991')
      .waitFor();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(customerSink.messages.length, sent + 1, 'notes are never mailed');
    // Choosing Reply or Note with the pointer starts the writing too.
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'composer-body');
    await page.getByRole('button', { name: 'Note', exact: true }).click();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'composer-body');
    assert.match((await page.locator('#composer-body').getAttribute('aria-placeholder')) ?? '', /note for the team/);

    // e closes; the conversation leaves the Open list.
    await page.keyboard.press('Escape');
    await page.keyboard.press('e');
    await page.getByRole('button', { name: 'Reopen' }).waitFor();
    await page.getByText('Nothing here').waitFor();
    await page.locator('.event-line').filter({ hasText: 'Status changed to Closed · by you' }).waitFor();

    // The draft survives a reload.
    await page.keyboard.press('r');
    await page.keyboard.type('Half-written answer');
    await page.reload();
    await page.getByLabel('Reply').first().waitFor();
    await page.locator('#composer-body[contenteditable]').getByText('Half-written answer').waitFor();

    // / searches across conversations.
    await page.locator('body').click({ position: { x: 5, y: 790 } });
    await page.keyboard.press('/');
    await page.keyboard.type('invoice 4411');
    await page
      .getByRole('list', { name: /Results for/ })
      .getByText('Invoice 4411 charged twice')
      .waitFor();

    await page.keyboard.press('Escape');
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await assertAccessible(page);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    await screenshot(page, 'panel-conversation');
    assert.deepEqual(outside, [], 'every request goes to svc');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a phone-sized window shows one pane at a time, in Turkish', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const { context, page, errors } = await panelPage({ width: 390, height: 844, locale: 'tr-TR' });
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/conversations?status=closed`);
      await page.getByRole('heading', { name: 'Tümü' }).waitFor();
      await assertAccessible(page);
      const row = page.getByRole('link', { name: /Ada Lovelace/ });
      await row.click();
      await page.getByRole('button', { name: /Geri/ }).waitFor();
      await page.locator('.event-line').filter({ hasText: 'Durum Kapalı olarak değişti · sizin tarafınızdan' }).waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Tümü' }).isVisible(), false, 'the list is hidden while a conversation is open');
      await assertAccessible(page);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `no horizontal scrolling (${width}px)`);
      await page.getByRole('button', { name: /Geri/ }).click();
      await page.getByRole('heading', { name: 'Tümü' }).waitFor();
      assert.deepEqual(errors, []);
      await context.close();
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });

  test('HTML mail shows in a sandboxed frame; images from elsewhere load only when asked', async () => {
    const hits: string[] = [];
    const pixel = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACwAAAAAAQABAAA=', 'base64'));
    });
    await new Promise<void>((r) => pixel.listen(0, '127.0.0.1', r));
    const port = (pixel.address() as AddressInfo).port;
    try {
      await sendToIngress(ingressPort(s), {
        from: 'News Person <np@html.example>',
        to: address,
        subject: 'Tracked mail',
        text: 'Plain version',
        html: `<p>Hello <b>there</b></p><img src="http://127.0.0.1:${port}/track.gif" alt="tracker"><script>window.bad=1</script>`,
      });
      const { context, page } = await panelPage();
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/conversations`);
      await page.getByRole('link', { name: /News Person/ }).click();
      await page.getByRole('button', { name: 'Show formatted' }).click();
      const frame = page.frameLocator('iframe[title="Show formatted"]');
      await frame.getByText('there').waitFor();
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(hits, [], 'nothing is fetched from elsewhere before the reader asks');
      await page.getByRole('button', { name: /Load images from elsewhere/ }).click();
      await frame.getByRole('img', { name: 'tracker' }).waitFor();
      for (let i = 0; i < 50 && !hits.length; i++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(hits, ['/track.gif']);
      await context.close();
    } finally {
      pixel.close();
    }
  });
  test('HTML newsletter (issue 43 item 3): its cid: banner renders in the frame, the frame fits the mail, inline parts are not listed as files', async () => {
    await sendToIngress(ingressPort(s), {
      from: 'Spring Letter <letter@news.example>',
      to: address,
      subject: 'Spring newsletter',
      text: 'Spring news in plain text',
      html: `<table width="600" style="width:600px;border-collapse:collapse"><tr><td><img src="cid:banner@news.example" alt="Spring banner" width="600" height="120" style="display:block"></td></tr>
<tr><td><h1>Spring news</h1>${'<p>Our garden centre opens early this year, with new plants every week.</p>'.repeat(12)}<p>The last line of the letter</p></td></tr></table>`,
      attachments: [
        { filename: 'banner.png', content: solidPng(600, 120), contentType: 'image/png', cid: 'banner@news.example', contentDisposition: 'inline' },
        { filename: 'terms.pdf', content: Buffer.from('%PDF-1.4 terms'), contentType: 'application/pdf' },
      ],
    });
    for (const [locale, width, height, show, text] of [
      ['en-US', 1280, 800, 'Show formatted', 'Show text'],
      ['tr-TR', 390, 844, 'Biçimli göster', 'Metin olarak göster'],
    ] as const) {
      await s.app.db
        .updateTable('people')
        .set({ locale: locale.slice(0, 2) })
        .where('id', '=', seed.ownerId)
        .execute();
      const { context, page, errors } = await panelPage({ width, height, locale });
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/conversations`);
      await page.getByRole('link', { name: /Spring Letter/ }).click();
      const message = page.locator('article.msg', { hasText: 'Spring Letter' });
      await message.getByRole('button', { name: show }).click();
      const frame = page.frameLocator('iframe.mail-frame');
      await frame.getByText('The last line of the letter').waitFor();
      const banner = frame.getByRole('img', { name: 'Spring banner' });
      await banner.waitFor();
      for (let i = 0; i < 100 && !(await banner.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)); i++) await page.waitForTimeout(50);
      assert.equal(await banner.evaluate((img: HTMLImageElement) => img.naturalWidth), 600, 'the inline banner rendered');
      // Wait until the frame has taken its content's size, then check nothing is cut off either way.
      let fit = { frameH: 0, docH: 1, frameW: 0, shownW: 1 };
      for (let i = 0; i < 100; i++) {
        fit = await page.locator('iframe.mail-frame').evaluate((el: HTMLIFrameElement) => {
          const doc = el.contentDocument!;
          const zoom = Number(doc.body.style.zoom || 1);
          return { frameH: el.clientHeight, docH: doc.documentElement.scrollHeight, frameW: el.clientWidth, shownW: Math.ceil(doc.body.scrollWidth * zoom) };
        });
        if (fit.frameH >= fit.docH && fit.docH > 300) break;
        await page.waitForTimeout(50);
      }
      assert.ok(fit.frameH >= fit.docH && fit.docH > 300, `the frame is as tall as the mail (${JSON.stringify(fit)})`);
      assert.ok(fit.shownW <= fit.frameW + 1, `the 600 px mail is scaled into the pane (${JSON.stringify(fit)})`);
      const files = message.locator('.attachments');
      await files.getByText('terms.pdf').waitFor();
      assert.equal(await files.getByText('banner.png').count(), 0, 'the inline banner is not listed again as a file');
      await screenshot(page, `html-mail-${locale}-${width}`);
      await message.getByRole('button', { name: text }).click();
      await message.getByText('Spring news in plain text').waitFor();
      // axe cannot run inside a frame that runs no scripts: the page is checked around it.
      await assertAccessible(page);
      assert.deepEqual(errors, []);
      await context.close();
    }
    await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
  });

  test('mail: the quoted earlier mail is folded; an image attachment opens a preview (issue 43 item 13)', async () => {
    await sendToIngress(ingressPort(s), {
      from: 'Quoting Customer <quoter@cust.example>',
      to: address,
      subject: 'Re: your order',
      text: 'Thanks, that helps.\nOne more question about the size.\n\nOn Mon, 2 Nov 2026 at 10:00, Support <support@acme.example> wrote:\n> Your order ships today.\n> Regards',
      attachments: [{ filename: 'photo.png', content: solidPng(40, 30), contentType: 'image/png' }],
    });
    const { context, page, errors } = await panelPage();
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations`);
    await page.getByRole('link', { name: /Quoting Customer/ }).click();
    const message = page.locator('article.msg', { hasText: 'One more question about the size.' });
    await message.waitFor();
    assert.equal(await message.getByText('Your order ships today.').count(), 0, 'the quote is folded away');
    await message.getByRole('button', { name: 'Show quoted text' }).click();
    await message.getByText('Your order ships today.', { exact: false }).waitFor();
    await message.getByRole('button', { name: 'Hide quoted text' }).waitFor();

    await message.getByRole('button', { name: 'Preview photo.png' }).click();
    const preview = page.getByRole('dialog', { name: 'photo.png' });
    const image = preview.getByRole('img', { name: 'photo.png' });
    await image.waitFor();
    for (let i = 0; i < 100 && !(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)); i++) await page.waitForTimeout(50);
    assert.equal(await image.evaluate((img: HTMLImageElement) => img.naturalWidth), 40);
    assert.equal(await preview.getByRole('link', { name: 'Download' }).getAttribute('download'), 'photo.png');
    await assertAccessible(page);
    await screenshot(page, 'image-preview-en-1280');
    await page.keyboard.press('Escape');
    await preview.waitFor({ state: 'detached' });

    // The list row shows the priority, the first labels (in the stored order) and whom it is assigned to.
    const conv = await s.app.db.selectFrom('conversations').select('id').where('subject', '=', 'Re: your order').executeTakeFirstOrThrow();
    const patched = await s.request('PATCH', `/v1/conversations/${conv.id}`, {
      token: seed.ownerToken,
      body: { priority: 'urgent', labels: ['billing', 'vip', 'later'], assignee_id: seed.ownerId },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const row = page.locator('a.row', { hasText: 'Quoting Customer' });
    await row.locator('.row-tags').getByText('Urgent').waitFor();
    assert.deepEqual(await row.locator('.row-tags .badge').allInnerTexts(), ['Urgent', 'billing', 'later', '+1']);
    assert.equal(await row.locator('.row-assignee .visually-hidden').innerText(), 'Assigned to You');
    await screenshot(page, 'list-row-tags-en-1280');
    assert.deepEqual(errors, []);
    await context.close();
  });
});

/** A PNG of one colour, width × height (a newsletter's banner). */
function solidPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])));
    return Buffer.concat([len, Buffer.from(type), data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([0x2e, 0x8b, 0x57]))]);
  const pixels = zlib.deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
