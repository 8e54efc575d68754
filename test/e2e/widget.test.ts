// The embeddable chat widget in a real browser. The host site is another loopback origin
// (http://shop.test:<port>, mapped to 127.0.0.1 with --host-resolver-rules) with a strict CSP:
// script-src and connect-src name only svc, no 'unsafe-inline' anywhere. A visitor chats, the team
// answers from the API and from the panel, typing shows both ways, the conversation survives a
// reload, offline e-mail capture, an identified visitor, a refused origin, hostile host CSS, a phone
// and Turkish, and axe finds no serious or critical violations.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createChatChannel } from '../../src/channels/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { identityHash } from '../../src/widget/service.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const HOSTILE_CSS = `button{all:unset!important} *{font-family:serif!important;color:red!important;box-sizing:content-box!important;line-height:3!important}
div,section,p{display:inline!important;margin:40px!important;padding:30px!important} svc-chat{display:none}`;

interface HostPage {
  key: string;
  css?: boolean;
  /** connect-src names svc for https only (no ws:): the widget falls back to fetching. */
  httpOnly?: boolean;
  /** A same-origin script that calls svc('identify', …) (the page's CSP then also allows 'self'). */
  identify?: Record<string, string>;
  /** img-src also allows blob: (the widget shows image attachments through blob: URLs). */
  images?: boolean;
}

// A 2×2 red PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8AARAwQCoQBAMT/Bfu1vAGoAAAAAElFTkSuQmCC', 'base64');

describe('chat widget in a browser', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let host: http.Server;
  let shop: string;
  let evil: string;
  const pages = new Map<string, HostPage>();
  const keys: Record<'plain' | 'offline' | 'turkish', string> = { plain: '', offline: '', turkish: '' };
  let inboxSecret: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    host = http.createServer((req, res) => serveHost(req, res));
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const port = (host.address() as AddressInfo).port;
    shop = `http://shop.test:${port}`;
    evil = `http://evil.test:${port}`;
    keys.plain = (
      await createChatChannel(s.app, {
        workspaceId: seed.workspaceId,
        inboxId: seed.inboxId,
        name: 'Chat',
        origins: [shop],
        allowAnonymous: true,
        askEmailOffline: false,
        greeting: 'Hi! How can we help?',
      })
    ).public_key!;
    keys.offline = (
      await createChatChannel(s.app, {
        workspaceId: seed.workspaceId,
        inboxId: seed.inboxId,
        name: 'Chat offline',
        origins: [shop],
        allowAnonymous: true,
        askEmailOffline: true,
      })
    ).public_key!;
    const turkish = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Destek', locale: 'tr', mode: 'async', expectedReplyMinutes: 120 });
    keys.turkish = (
      await createChatChannel(s.app, {
        workspaceId: seed.workspaceId,
        inboxId: turkish.id,
        name: 'Sohbet',
        origins: [shop],
        allowAnonymous: true,
        askEmailOffline: false,
      })
    ).public_key!;
    const inbox = await s.app.db.selectFrom('inboxes').select('identity_secret_sealed').where('id', '=', seed.inboxId).executeTakeFirstOrThrow();
    inboxSecret = s.app.sealer.open(inbox.identity_secret_sealed);
    browser = await launchBrowser({ args: ['--host-resolver-rules=MAP shop.test 127.0.0.1, MAP evil.test 127.0.0.1'] });
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await new Promise((r) => host?.close(r));
  });

  function serveHost(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://host');
    const svc = new URL(s.url).origin;
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    if (url.pathname === '/host.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end(HOSTILE_CSS);
    const page = pages.get(url.pathname.slice(1));
    if (url.pathname === '/identify.js' || url.pathname.endsWith('/identify.js')) {
      const p = pages.get(url.searchParams.get('page') ?? '');
      return void res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end(`window.svc=window.svc||function(){(svc.q=svc.q||[]).push(arguments)};svc('identify',${JSON.stringify(p?.identify ?? {})});`);
    }
    if (!page) return void res.writeHead(404).end('not found');
    const scriptSrc = page.identify ? `'self' ${svc}` : svc;
    const connectSrc = page.httpOnly ? svc : `${svc} ${svc.replace(/^http/, 'ws')}`;
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src ${scriptSrc}; connect-src ${connectSrc}; style-src 'self'; img-src 'self'${page.images ? ' blob:' : ''}`,
    });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title>
${page.css ? '<link rel="stylesheet" href="/host.css">' : ''}
${page.identify ? `<script src="/identify.js?page=${url.pathname.slice(1)}"></script>` : ''}
</head><body><main><h1>The shop</h1><p>Things to buy.</p><button type="button">Buy</button></main>
<script src="${svc}/widget.js" data-key="${page.key}" async></script></body></html>`);
  }

  async function visit(name: string, page: HostPage, opts: { origin?: string; width?: number; height?: number; beforeLoad?: (p: Page) => Promise<void> } = {}) {
    pages.set(name, page);
    const { context, page: p } = await browser.newPage({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 } });
    const problems: string[] = [];
    p.on('pageerror', (e) => problems.push(String(e)));
    p.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
    p.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy|svc widget/.test(m.text())) problems.push(m.text());
    });
    await opts.beforeLoad?.(p);
    await p.goto(`${opts.origin ?? shop}/${name}`);
    return { context, page: p, problems };
  }

  const launcher = (page: Page) => page.locator('svc-chat').getByRole('button', { name: /Open chat|Close chat|Sohbeti/ });

  async function conversationOf(contactName: RegExp | null, since: string) {
    for (let i = 0; i < 100; i++) {
      const row = await s.app.db
        .selectFrom('conversations')
        .select(['id', 'contact_id'])
        .where('workspace_id', '=', seed.workspaceId)
        .where('created_at', '>', since)
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      if (row) return row;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`no conversation created (${contactName})`);
  }

  test('a visitor chats on a strict-CSP site; the team answers live, typing shows both ways; closed: badge and title; reload keeps it', async () => {
    const since = new Date().toISOString();
    const { context, page, problems } = await visit('chat', { key: keys.plain });
    await launcher(page).click();
    const dialog = page.getByRole('dialog', { name: 'Chat with Support' });
    await dialog.waitFor();
    await dialog.getByText('Hi! How can we help?').waitFor();
    await assertAccessible(page);
    const box = dialog.getByLabel('Write a message');
    assert.equal(await box.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement), true, 'opening focuses the text box');

    await box.fill('Where is my order?');
    await box.press('Enter');
    await dialog.getByText('Where is my order?').waitFor();
    const conversation = await conversationOf(null, since);

    // The team answers through the API; the visitor sees it without a reload.
    const reply = await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'message', body: 'It ships today.' },
    });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    await dialog.getByText('It ships today.').waitFor();

    // Team typing reaches the visitor; visitor typing is stored as a realtime-only event.
    const typing = await s.request('POST', `/v1/conversations/${conversation.id}/typing`, { token: seed.ownerToken });
    assert.equal(typing.status, 200);
    await dialog.getByText('The team is typing…').waitFor();
    await box.pressSequentially('Than');
    for (let i = 0; i < 50; i++) {
      const ev = await s.app.db
        .selectFrom('events')
        .select(['data', 'webhook'])
        .where('type', '=', 'typing')
        .where('workspace_id', '=', seed.workspaceId)
        .where('contact_id', 'is', null)
        .execute();
      if (ev.some((e) => JSON.parse(e.data).author.type === 'contact')) {
        assert.ok(ev.every((e) => e.webhook === 0));
        break;
      }
      assert.ok(i < 49, 'the visitor typing signal was not stored');
      await new Promise((r) => setTimeout(r, 100));
    }

    // Esc closes and gives focus back to the launcher; a reply while closed shows a badge and a title hint.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await launcher(page).evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement), true, 'Esc returns focus to the launcher');
    await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'message', body: 'Tracking number: 42.' },
    });
    await page.locator('svc-chat').getByRole('button', { name: 'Open chat (1 unread)' }).waitFor();
    await page.waitForFunction(() => document.title.startsWith('(1) New message'));

    // Keyboard alone: Enter on the focused launcher opens it again.
    await page.keyboard.press('Enter');
    await dialog.getByText('Tracking number: 42.').waitFor();
    assert.equal(await page.title(), 'Shop');

    // A reload (or another page of the site) keeps the conversation.
    await page.reload();
    await launcher(page).click();
    await dialog.getByText('Where is my order?').waitFor();
    await dialog.getByText('Tracking number: 42.').waitFor();
    assert.deepEqual(problems, []);
    await screenshot(page, 'widget-desktop');
    await context.close();
  });

  test('a dropped connection shows "Reconnecting…", then resumes and shows what was missed', async () => {
    const since = new Date().toISOString();
    const { context, page, problems } = await visit('drop', { key: keys.plain });
    // Every widget socket goes through this route, so the test can cut it like a lost network.
    let reachable = true;
    const sockets: { close(): Promise<void> }[] = [];
    await page.routeWebSocket(/\/v1\/widget\/realtime/, (ws) => {
      if (!reachable) return void ws.close({ code: 4000, reason: 'network down' });
      ws.connectToServer();
      sockets.push(ws);
    });
    await launcher(page).click();
    const dialog = page.getByRole('dialog');
    const box = dialog.getByLabel('Write a message');
    await box.fill('Are you there?');
    await box.press('Enter');
    const conversation = await conversationOf(null, since);
    await s.request('POST', `/v1/conversations/${conversation.id}/messages`, { token: seed.ownerToken, body: { kind: 'message', body: 'Yes, live.' } });
    await dialog.getByText('Yes, live.').waitFor();

    reachable = false;
    await Promise.all(sockets.splice(0).map((ws) => ws.close()));
    await dialog.getByRole('status').filter({ hasText: 'Reconnecting…' }).waitFor();
    await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'message', body: 'Sent while you were away.' },
    });
    reachable = true;
    await dialog.getByText('Sent while you were away.').waitFor({ timeout: 20_000 });
    await dialog.getByText('Reconnecting…').waitFor({ state: 'detached', timeout: 20_000 });
    assert.equal(await dialog.getByText('Sent while you were away.').count(), 1, 'shown once');
    // Live again: the next reply arrives through the new socket.
    await s.request('POST', `/v1/conversations/${conversation.id}/messages`, { token: seed.ownerToken, body: { kind: 'message', body: 'Back to live.' } });
    await dialog.getByText('Back to live.').waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('a reply that comes live while the thread is still loading stays when the thread arrives', async () => {
    const since = new Date().toISOString();
    const { context, page, problems } = await visit('late-thread', { key: keys.plain });
    // The live connection opens with the first message and reloads the thread; that answer is held
    // back, as a slow network would, until a reply has come over the connection.
    let threadAnswers = 0;
    page.on('response', (r) => {
      if (r.request().method() === 'GET' && /\/v1\/widget\/conversations\/[^/]+\/messages/.test(r.url())) threadAnswers++;
    });
    let held!: () => void;
    const heldBack = new Promise<void>((resolve) => (held = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    await page.route(/\/v1\/widget\/conversations\/[^/]+\/messages/, async (route) => {
      if (route.request().method() !== 'GET' || !first) return route.continue();
      first = false;
      const response = await route.fetch();
      held();
      await released;
      await route.fulfill({ response });
    });
    await launcher(page).click();
    const dialog = page.getByRole('dialog');
    const box = dialog.getByLabel('Write a message');
    await box.fill('Is my parcel lost?');
    await box.press('Enter');
    const conversation = await conversationOf(null, since);
    await heldBack;
    await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'message', body: 'Found it, it ships now.' },
    });
    await dialog.getByText('Found it, it ships now.').waitFor();
    release();
    for (let i = 0; threadAnswers < 1; i++) {
      assert.ok(i < 100, 'the held answer arrived');
      await page.waitForTimeout(100);
    }
    await page.waitForTimeout(500);
    assert.equal(await dialog.getByText('Found it, it ships now.').count(), 1, 'the older thread did not replace the live reply');
    await dialog.getByText('Is my parcel lost?').waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('offline, with "ask e-mail when offline": the visitor leaves an address before the first message', async () => {
    const since = new Date().toISOString();
    const { context, page, problems } = await visit('offline', { key: keys.offline, httpOnly: true });
    await launcher(page).click();
    const dialog = page.getByRole('dialog');
    const email = dialog.getByRole('textbox', { name: 'E-mail address' });
    await email.waitFor();
    assert.equal(await email.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement), true);
    await email.fill('not an address');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    await dialog.getByText('Please enter a valid e-mail address.').waitFor();
    await email.fill('ayse@example.com');
    await dialog.getByRole('button', { name: 'Continue' }).click();
    const box = dialog.getByLabel('Write a message');
    await box.fill('Please call me back.');
    await box.press('Enter');
    await dialog.getByText('Please call me back.').waitFor();
    const conversation = await conversationOf(null, since);
    const contact = await s.request('GET', `/v1/contacts/${conversation.contact_id}`, { token: seed.ownerToken });
    // A typed address proves nothing: it is kept apart, for the team to confirm (issue 32).
    assert.deepEqual([contact.body.emails, contact.body.unverified_email], [[], 'ayse@example.com']);
    await assertAccessible(page);
    // This page's connect-src allows no ws: the socket is refused and replies arrive by fetching.
    const reply = await s.request('POST', `/v1/conversations/${conversation.id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'message', body: 'We will call you.' },
    });
    assert.equal(reply.status, 201);
    await dialog.getByText('We will call you.').waitFor({ timeout: 10_000 });
    assert.deepEqual(
      problems.filter((p) => !/Connecting to 'ws:.* violates the following Content Security Policy directive/.test(p)),
      [],
    );
    await context.close();
  });

  /** Waits until the server counts as many open team connections as asked (the widget's presence reads them). */
  async function teamConnections(open: boolean) {
    for (let i = 0; i < 200; i++) {
      const row = await s.app.db
        .selectFrom('realtime_connections')
        .select('id')
        .where('workspace_id', '=', seed.workspaceId)
        .where('kind', '=', 'member')
        .where('closed_at', 'is', null)
        .executeTakeFirst();
      if ((row !== undefined) === open) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(open ? 'no team member came online' : 'a team member stayed online');
  }

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

  test('an identified visitor (identity hash) sees all of their conversations', async () => {
    const externalId = 'user-1234';
    const hash = identityHash(inboxSecret, externalId);
    for (const body of ['First question', 'Second question']) {
      const opened = await s.request('POST', '/v1/widget/sessions', {
        body: { public_key: keys.plain, external_id: externalId, identity_hash: hash, name: 'Deniz' },
        headers: { origin: shop },
      });
      assert.equal(opened.status, 201);
      assert.equal((await s.request('POST', '/v1/widget/conversations', { token: opened.body.token, body: { body }, headers: { origin: shop } })).status, 201);
    }
    // Its sockets go through a route, so the test can cut the live connection while the list is open.
    const sockets: { close(): Promise<void> }[] = [];
    const { context, page, problems } = await visit(
      'identified',
      { key: keys.plain, identify: { external_id: externalId, identity_hash: hash, name: 'Deniz' } },
      {
        beforeLoad: (p) =>
          p.routeWebSocket(/\/v1\/widget\/realtime/, (ws) => {
            ws.connectToServer();
            sockets.push(ws);
          }),
      },
    );
    await launcher(page).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Your conversations (2)' }).click();
    await dialog.getByRole('button', { name: 'New conversation' }).waitFor();
    assert.equal(await dialog.locator('.conv:not(.new)').count(), 2);
    // Each names its latest message, whose it is.
    assert.deepEqual(await dialog.locator('.conv:not(.new) .conv-latest').allInnerTexts(), ['You: Second question', 'You: First question']);

    // The connection comes back while the list is open: the widget reloads (its conversations, then
    // the shown conversation's messages from the start), and the list stays open.
    let reloads = 0;
    page.on('response', (r) => {
      if (/\/v1\/widget\/conversations\/[^/]+\/messages/.test(r.url()) && !r.url().includes('after=')) reloads++;
    });
    for (let i = 0; i < 100 && sockets.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await Promise.all(sockets.splice(0).map((ws) => ws.close()));
    await dialog.getByRole('status').filter({ hasText: 'Reconnecting…' }).waitFor();
    await dialog.getByText('Reconnecting…').waitFor({ state: 'detached', timeout: 20_000 });
    for (let i = 0; i < 200 && reloads === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(reloads >= 1, 'reloaded once the connection was live again');
    assert.equal(await dialog.getByRole('button', { name: 'New conversation' }).isVisible(), true, 'the list is still open');
    assert.equal(await dialog.locator('.conv:not(.new)').count(), 2);
    await dialog.locator('.conv:not(.new)').nth(1).click();
    await dialog.getByText('First question').waitFor();
    assert.deepEqual(problems, []);

    // A wrong hash proves nothing: the session is refused and no launcher state leaks anything.
    const refused = await s.request('POST', '/v1/widget/sessions', {
      body: { public_key: keys.plain, external_id: externalId, identity_hash: '00'.repeat(32) },
      headers: { origin: shop },
    });
    assert.equal(refused.status, 401);
    await context.close();
  });

  test('a site that is not among the allowed origins gets no widget', async () => {
    const { context, page, problems } = await visit('elsewhere', { key: keys.plain }, { origin: evil });
    await page.waitForFunction(() => document.readyState === 'complete');
    for (let i = 0; i < 50 && !problems.some((p) => /svc widget: not shown/.test(p)); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      problems.some((p) => /svc widget: not shown .*origin .*is not allowed/.test(p)),
      problems.join('\n'),
    );
    assert.equal(await page.locator('svc-chat').count(), 0);
    await context.close();
  });

  test('hostile host CSS changes nothing; full screen on a phone; Turkish follows the inbox locale', async () => {
    const measure = async (page: Page) => {
      await launcher(page).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      return page.locator('svc-chat').evaluate((hostEl) => {
        const root = hostEl.shadowRoot!;
        const pick = (el: Element) => {
          const cs = getComputedStyle(el);
          const r = el.getBoundingClientRect();
          return {
            x: r.x,
            y: r.y,
            w: r.width,
            h: r.height,
            font: cs.fontFamily,
            color: cs.color,
            bg: cs.backgroundColor,
            display: cs.display,
            padding: cs.padding,
          };
        };
        return {
          launcher: pick(root.querySelector('.launcher')!),
          panel: pick(root.querySelector('.panel')!),
          send: pick(root.querySelector('.send')!),
          bubble: pick(root.querySelector('.bubble')!),
        };
      });
    };
    const plain = await visit('plain-css', { key: keys.plain });
    const hostile = await visit('hostile-css', { key: keys.plain, css: true });
    const a = await measure(plain.page);
    const b = await measure(hostile.page);
    assert.deepEqual(b, a);
    assert.equal(a.panel.w, 380);
    assert.deepEqual(hostile.problems, []);
    await plain.context.close();
    await hostile.context.close();

    await teamConnections(false);
    const phone = await visit('phone', { key: keys.turkish }, { width: 390, height: 844 });
    await phone.page.locator('svc-chat').getByRole('button', { name: 'Sohbeti aç' }).click();
    const dialog = phone.page.getByRole('dialog', { name: 'Destek ile sohbet' });
    await dialog.getByText('Genellikle 2 saat içinde yanıt verir').waitFor();
    const box = await dialog.boundingBox();
    assert.deepEqual(box, { x: 0, y: 0, width: 390, height: 844 });
    await dialog.getByLabel('Bir mesaj yazın').waitFor();
    assert.match((await dialog.getByLabel('Bir mesaj yazın').getAttribute('title')) ?? '', /\*\*kalın\*\*/);
    await assertAccessible(phone.page);
    await screenshot(phone.page, 'widget-phone-tr');
    await phone.context.close();
  });
});
