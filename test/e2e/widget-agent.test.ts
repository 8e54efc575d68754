// The chat widget and the team in the panel, in a real browser, on a host site with a strict CSP
// (the scene: test/helpers/widget-site.ts): presence follows the team's live panel connections, an
// agent answers from the panel with typing shown both ways and light formatting (hostile markup
// shown as text or not at all), and files go both ways (the visitor's image seen in the panel, the
// team's image and text file in the widget); axe finds no serious or critical violations.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createChatChannel } from '../../src/channels/service.js';
import { assertAccessible, type BrowserSession, browserSkipReason, screenshot } from '../helpers/browser.js';
import type { Seed } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { launcher, startWidgetScene, type WidgetScene } from '../helpers/widget-site.js';

// A 2×2 red PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8AARAwQCoQBAMT/Bfu1vAGoAAAAAElFTkSuQmCC', 'base64');

describe('chat widget in a browser: the team in the panel', { skip: browserSkipReason() }, () => {
  let scene: WidgetScene;
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let shop: string;
  let keys: WidgetScene['keys'];
  let visit: WidgetScene['visit'];
  let conversationOf: WidgetScene['conversationOf'];
  let teamConnections: WidgetScene['teamConnections'];

  before(async () => {
    scene = await startWidgetScene();
    ({ s, seed, browser, shop, keys, visit, conversationOf, teamConnections } = scene);
  });
  after(() => scene?.stop());

  test('presence follows the team (issue 43 item 2): nobody online → a neutral line and the e-mail question first; someone online → "Online now" and the visitor writes at once', async () => {
    await teamConnections(false);
    const away = await visit('presence-away', { key: keys.offline });
    await launcher(away.page).click();
    let dialog = away.page.getByRole('dialog');
    await dialog.getByText('We’ll reply as soon as we can').waitFor();
    assert.equal(await dialog.locator('.dot.on').count(), 0, 'no green dot while nobody is online');
    assert.equal((await dialog.locator('.availability').innerText()).trim(), 'We’ll reply as soon as we can');
    await dialog.getByRole('textbox', { name: 'E-mail address' }).waitFor();
    assert.equal(await dialog.getByLabel('Write a message').count(), 0, 'offline: the address comes first');
    await screenshot(away.page, 'widget-presence-away-1280');

    // An agent opens the panel: the same visitor, reopening the chat, sees the team online and writes at once.
    const agent = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await agent.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, domain: new URL(s.url).hostname, path: '/' }]);
    await agent.page.goto(`${s.url}/conversations`);
    await teamConnections(true);
    // Closed and opened again with the launcher: the panel asks for presence as it opens.
    await away.page.locator('svc-chat').locator('.launcher').click();
    await dialog.waitFor({ state: 'hidden' });
    await away.page.locator('svc-chat').locator('.launcher').click();
    await dialog.getByText('Online now').waitFor();
    assert.equal(await dialog.locator('.dot.on').count(), 1, 'the green dot with "Online now"');
    assert.equal((await dialog.locator('.availability').innerText()).trim(), 'Online now');
    const box = dialog.getByLabel('Write a message');
    await box.waitFor();
    assert.equal(await dialog.getByRole('textbox', { name: 'E-mail address' }).count(), 0, 'online: no e-mail question first');
    assert.deepEqual(away.problems, []);
    await away.context.close();

    const since = new Date().toISOString();
    const online = await visit('presence-online', { key: keys.offline }, { width: 390, height: 844 });
    await launcher(online.page).click();
    dialog = online.page.getByRole('dialog');
    await dialog.getByText('Online now').waitFor();
    const write = dialog.getByLabel('Write a message');
    assert.equal(await write.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement), true, 'the message box has the focus');
    await write.fill('Is anyone there?');
    await write.press('Enter');
    await dialog.locator('.bubble.me', { hasText: 'Is anyone there?' }).waitFor();
    assert.ok(await conversationOf(null, since));
    await assertAccessible(online.page);
    await screenshot(online.page, 'widget-presence-online-390');
    await online.context.close();

    // A channel that needs an address, while someone is online: the address goes beside the first message.
    const needsEmail = (
      await createChatChannel(s.app, {
        workspaceId: seed.workspaceId,
        inboxId: seed.inboxId,
        name: 'Chat with address',
        origins: [shop],
        allowAnonymous: false,
        askEmailOffline: true,
      })
    ).public_key!;
    const since2 = new Date().toISOString();
    const asked = await visit('presence-email', { key: needsEmail });
    await launcher(asked.page).click();
    dialog = asked.page.getByRole('dialog');
    await dialog.getByText('Online now').waitFor();
    const message = dialog.getByLabel('Write a message');
    await message.fill('Where is my order?');
    await message.press('Enter');
    await dialog.getByText('Please enter a valid e-mail address.').waitFor();
    await dialog.getByRole('textbox', { name: 'Your e-mail address, so we can reply.' }).fill('deniz@example.com');
    await message.press('Enter');
    await dialog.locator('.bubble.me', { hasText: 'Where is my order?' }).waitFor();
    const conversation = await conversationOf(null, since2);
    const contact = await s.request('GET', `/v1/contacts/${conversation.contact_id}`, { token: seed.ownerToken });
    assert.equal(contact.body.unverified_email, 'deniz@example.com');
    assert.deepEqual(asked.problems, []);
    await asked.context.close();
    await agent.context.close();
    await teamConnections(false);
  });

  test('an agent answers from the panel: the panel shows the visitor typing and the widget the team typing', async () => {
    const since = new Date().toISOString();
    const visitor = await visit('panel-chat', { key: keys.plain });
    await launcher(visitor.page).click();
    const dialog = visitor.page.getByRole('dialog');
    await dialog.getByLabel('Write a message').fill('Do you ship to Izmir?');
    await dialog.getByLabel('Write a message').press('Enter');
    const conversation = await conversationOf(null, since);

    await s.app.db.updateTable('people').set({ name: 'Ayşe Kaya' }).where('id', '=', seed.ownerId).execute();
    const agent = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const svcUrl = new URL(s.url);
    await agent.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, domain: svcUrl.hostname, path: '/' }]);
    await agent.page.goto(`${s.url}/conversations/${conversation.id}`);
    await agent.page.locator('.msg-body', { hasText: 'Do you ship to Izmir?' }).waitFor();

    await dialog.getByLabel('Write a message').pressSequentially('Also to Ank');
    await agent.page.getByText(/is typing…/).waitFor();

    await agent.page.getByRole('textbox', { name: 'Reply' }).pressSequentially('Yes, we do.');
    await dialog.getByText('The team is typing…').waitFor();
    await agent.page.getByRole('button', { name: 'Send' }).click();
    await dialog.getByText('Yes, we do.').waitFor();
    // The reply is signed with the member's first name and its initial, not "Team" or the full name (issue 43 item 13).
    const reply = dialog.locator('.bubble.team', { hasText: 'Yes, we do.' });
    assert.equal((await reply.locator('.who').innerText()).replace(/\s+/g, ' ').trim(), 'A Ayşe');
    assert.equal(await reply.locator('.avatar').innerText(), 'A');

    // Light formatting both ways (issue 34), and hostile markup shows as text or not at all.
    const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned ?? null);
    const write = dialog.getByLabel('Write a message');
    assert.match((await write.getAttribute('title')) ?? '', /\*\*bold\*\*/, 'the text box says what formatting it takes');
    await write.fill('');
    await write.pressSequentially(
      '**Hi** _there_, `a<b>` see https://shop.example/x <img src=x onerror="window.__pwned=1"> <script>window.__pwned=2</script> [x](javascript:window.__pwned=3)',
    );
    await write.press('Enter');
    const mine = dialog.locator('.bubble.me', { hasText: 'there' });
    await mine.locator('.rich strong', { hasText: 'Hi' }).waitFor();
    assert.equal(await mine.locator('.rich em').innerText(), 'there');
    assert.equal(await mine.locator('.rich code').innerText(), 'a<b>');
    const typedLink = mine.locator('.rich a');
    assert.equal(await typedLink.count(), 1);
    assert.deepEqual(await typedLink.evaluate((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]), [
      'https://shop.example/x',
      '_blank',
      'noopener nofollow noreferrer',
    ]);
    assert.equal(await mine.locator('img, script').count(), 0);
    assert.match(await mine.innerText(), /<img src=x onerror="window\.__pwned=1"> <script>window\.__pwned=2<\/script>/, 'shown as the text it is');
    // The panel shows the formatting in place, built from the same whitelist; the hostile parts as text.
    const typedInPanel = agent.page.getByRole('article').filter({ hasText: 'there' });
    await typedInPanel.locator('.msg-rich strong', { hasText: 'Hi' }).waitFor();
    assert.equal(await typedInPanel.locator('.msg-rich em').innerText(), 'there');
    assert.equal(await typedInPanel.locator('.msg-rich code').innerText(), 'a<b>');
    assert.equal(await typedInPanel.locator('.msg-rich img, .msg-rich script').count(), 0);
    assert.match(await typedInPanel.locator('.msg-rich').innerText(), /<script>window\.__pwned=2<\/script>/, 'shown as the text it is');
    assert.equal(await typedInPanel.getByRole('button', { name: 'Show formatted' }).count(), 0, 'nothing to open: it is shown formatted');
    await screenshot(agent.page, 'panel-chat-formatted-en-1280');

    // The agent formats with Markdown shortcuts as they type: bold, then a list.
    const replyBox = agent.page.getByRole('textbox', { name: 'Reply' });
    await replyBox.pressSequentially('We ship **free** to:');
    await agent.page.keyboard.press('Enter');
    await agent.page.keyboard.type('- Izmir');
    await agent.page.keyboard.press('Enter');
    await agent.page.keyboard.type('Ankara');
    await agent.page.keyboard.press('Control+Enter');
    const formatted = dialog.locator('.bubble.team', { hasText: 'We ship' });
    await formatted.locator('.rich strong', { hasText: 'free' }).waitFor();
    assert.deepEqual(await formatted.locator('.rich ul li').allInnerTexts(), ['Izmir', 'Ankara']);
    // A hostile reply through the API: handlers, javascript: links, images and styles never reach the page.
    const hostile = await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: {
        html: '<p onclick="window.__pwned=4">Tap <a href="javascript:window.__pwned=5">here</a> or <a href="https://shop.example/help" target="_self">help</a><img src="x" onerror="window.__pwned=6"><style>*{display:none}</style></p><blockquote><p>quoted</p></blockquote>',
      },
    });
    assert.equal(hostile.status, 201);
    const tap = dialog.locator('.bubble.team', { hasText: 'Tap' });
    await tap.locator('.rich blockquote', { hasText: 'quoted' }).waitFor();
    assert.deepEqual(
      await tap.locator('a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')])),
      [['help', 'https://shop.example/help', '_blank', 'noopener nofollow noreferrer']],
    );
    assert.equal(await tap.locator('img, style, [onclick]').count(), 0);
    await tap.getByText('here').click();
    await tap.locator('p').first().click();
    assert.equal(await pwned(visitor.page), null);
    assert.equal(await pwned(agent.page), null);
    await screenshot(visitor.page, 'widget-formatted');
    await s.app.db.updateTable('people').set({ name: null }).where('id', '=', seed.ownerId).execute();
    await agent.context.close();
    await visitor.context.close();
  });

  test('a visitor attaches an image with the button and one by drop; the agent sees it; the team’s files show as a thumbnail and a link', async () => {
    const since = new Date().toISOString();
    const visitor = await visit('files', { key: keys.plain, images: true });
    await launcher(visitor.page).click();
    const dialog = visitor.page.getByRole('dialog');
    await dialog.getByLabel('Write a message').fill('My parcel arrived broken');
    const [chooser] = await Promise.all([visitor.page.waitForEvent('filechooser'), dialog.getByRole('button', { name: 'Attach a file' }).click()]);
    await chooser.setFiles({ name: 'parcel.png', mimeType: 'image/png', buffer: PNG });
    await dialog.getByRole('button', { name: 'Remove parcel.png' }).waitFor();
    await dialog.getByRole('button', { name: 'Send' }).click();
    const loaded = async (img: ReturnType<Page['locator']>) => {
      await img.waitFor();
      await img.evaluate((el: HTMLImageElement) => (el.complete ? undefined : new Promise((r) => (el.onload = r))));
      return img.evaluate((el: HTMLImageElement) => el.naturalWidth);
    };
    assert.equal(await loaded(dialog.getByRole('img', { name: 'parcel.png' })), 2, 'the visitor sees a preview of their image');
    const conversation = await conversationOf(null, since);
    const stored = await s.app.db.selectFrom('attachments').select(['filename', 'message_id']).where('conversation_id', '=', conversation.id).execute();
    assert.deepEqual(
      stored.map((a) => a.filename),
      ['parcel.png'],
    );
    assert.ok(stored[0]!.message_id);

    // Dropped onto the panel: waits in the composer until sent.
    await dialog.evaluate(
      (panel, bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'receipt.txt', { type: 'text/plain' }));
        panel.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
        panel.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      },
      [...Buffer.from('order 42')],
    );
    await dialog.getByRole('button', { name: 'Remove receipt.txt' }).waitFor();
    await dialog.getByRole('button', { name: 'Send' }).click();
    await dialog.getByRole('link', { name: /receipt\.txt/ }).waitFor();

    // The agent sees the visitor's image in the panel.
    await s.app.db.updateTable('people').set({ name: 'Ayşe Kaya' }).where('id', '=', seed.ownerId).execute();
    const agent = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const svcUrl = new URL(s.url);
    await agent.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, domain: svcUrl.hostname, path: '/' }]);
    await agent.page.goto(`${s.url}/conversations/${conversation.id}`);
    assert.equal(await loaded(agent.page.locator('.attachment img[alt="parcel.png"]')), 2, 'the agent sees the visitor’s image');
    await agent.page.locator('.attachment', { hasText: 'receipt.txt' }).waitFor();
    await agent.context.close();

    // The team's files reach the widget live: an image previewed, a text file as a download link.
    const ids: string[] = [];
    for (const [name, type, data] of [
      ['label.png', 'image/png', PNG],
      ['invoice.txt', 'text/plain', Buffer.from('total 10')],
    ] as const) {
      const up = await s.request('POST', `/v1/conversations/${conversation.id}/attachments?filename=${name}`, {
        token: seed.ownerToken,
        raw: data,
        headers: { 'content-type': type },
      });
      assert.equal(up.status, 201, JSON.stringify(up.body));
      ids.push(up.body.id);
    }
    const reply = await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: { body: 'Your return label', attachment_ids: ids },
    });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    await dialog.getByText('Your return label').waitFor();
    assert.equal(await loaded(dialog.getByRole('img', { name: 'label.png' })), 2, 'the visitor sees the team’s image previewed');
    const link = dialog.getByRole('link', { name: /invoice\.txt/ });
    await link.waitFor();
    await visitor.page.waitForFunction(() =>
      document.querySelector('svc-chat')?.shadowRoot?.querySelector('a[download="invoice.txt"]')?.getAttribute('href')?.startsWith('blob:'),
    );
    await assertAccessible(visitor.page);
    assert.deepEqual(visitor.problems, []);
    await visitor.context.close();
  });
});
