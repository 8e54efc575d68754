// The panel in a real browser against a real server: sign in with a mailed code, mail arriving over
// SMTP appears live, a reply from the composer reaches the customer's mail server with threading
// headers, notes stay inside, keyboard shortcuts, search, a phone-sized window, both languages, and
// no serious accessibility violations on any page.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import type { Page } from 'playwright-core';
import { createInbox } from '../../src/inboxes/service.js';
import { createSignInLink } from '../../src/people/sign-in-links.js';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, ingressPort, SINK_LOGIN, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('panel in a browser', { skip: browserSkipReason() }, () => {
  let systemSink: SmtpSink;
  let customerSink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;
  let ownerEmail: string;
  const origin = () => new URL(s.url).origin;

  before(async () => {
    systemSink = await startSmtpSink();
    customerSink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({
      clock: systemClock,
      env: {
        SVC_INGRESS_SECRET: INGRESS_SECRET,
        SVC_SMTP_HOST: '127.0.0.1',
        SVC_SMTP_PORT: String(systemSink.port),
        SVC_SMTP_TLS: 'none',
        SVC_SMTP_FROM: 'svc@example.test',
      },
    });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed, { smtpPort: customerSink.port })).address!;
    ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await systemSink?.close();
    await customerSink?.close();
  });

  /** A page whose every request must go to svc itself. */
  async function panelPage(opts: { width?: number; height?: number; locale?: string } = {}) {
    const { context, page } = await browser.newPage({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 }, locale: opts.locale ?? 'en-US' });
    const outside: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.origin !== origin() && !['data:', 'blob:', 'about:'].includes(url.protocol)) outside.push(r.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
    return { context, page, outside, errors };
  }

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

  test('the details column: priority, labels, assignee, spam, another inbox, merging contacts', async () => {
    const billing = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' });
    const c = await deliverMail(s, address, { From: 'Bo Duplicate <bo@dup.example>', Subject: 'Sidebar check' });
    const keep = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { name: 'Bo Keeper', emails: ['bo.keeper@dup.example'] } });
    const api = (p: string) => s.request('GET', p, { token: seed.apiKey }).then((r) => r.body);
    const { context, page, errors } = await panelPage();
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations/${c.conversation_id}`);
    const details = page.getByRole('complementary', { name: 'Details' });
    // Changes show at once (optimistic); wait for the server's answer before reading it back.
    const saved = async (act: () => Promise<unknown>) => {
      const answer = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes(`/v1/conversations/${c.conversation_id}`));
      await act();
      assert.equal((await answer).status(), 200);
    };
    await saved(() => details.getByLabel('Priority').selectOption('urgent'));
    await details.getByLabel('Add a label').fill('vip');
    await saved(() => details.getByLabel('Add a label').press('Enter'));
    await details.getByRole('button', { name: 'Remove label vip' }).waitFor();
    const labelLink = page.getByRole('navigation', { name: 'Menu' }).getByRole('link', { name: /^vip/ });
    await labelLink.click();
    await page.getByRole('heading', { name: 'vip' }).waitFor();
    await page.getByRole('link', { name: /Bo Duplicate/ }).waitFor();
    await page.goto(`${s.url}/conversations/${c.conversation_id}`);
    await saved(() => details.getByRole('button', { name: 'Assign to me' }).click());
    await details.getByRole('button', { name: 'Assign to me' }).waitFor({ state: 'detached' });
    let conv = await api(`/v1/conversations/${c.conversation_id}`);
    assert.equal(conv.priority, 'urgent');
    assert.deepEqual(conv.labels, ['vip']);
    assert.equal(conv.assignee_id, seed.ownerId);
    await saved(() => details.getByRole('button', { name: 'Mark as spam' }).click());
    await details.getByText('Marked as spam').waitFor();
    await saved(() => details.getByRole('button', { name: 'Not spam' }).click());
    await page.reload();
    await saved(() => details.getByLabel('Move to inbox').selectOption(billing.id));
    await details.getByRole('definition').getByText('Billing', { exact: true }).waitFor();
    conv = await api(`/v1/conversations/${c.conversation_id}`);
    assert.equal(conv.inbox_id, billing.id);
    assert.equal(conv.spam, false);
    await assertAccessible(page);

    await details.getByRole('button', { name: 'Merge into another contact' }).click();
    const dialog = page.getByRole('dialog', { name: 'Merge into another contact' });
    await dialog.getByLabel('Find the contact to keep').fill('keeper');
    await dialog.getByRole('button', { name: /Bo Keeper/ }).click();
    await assertAccessible(page);
    await page.getByRole('dialog').getByRole('button', { name: 'Merge' }).click();
    await details.getByText('bo.keeper@dup.example').waitFor();
    conv = await api(`/v1/conversations/${c.conversation_id}`);
    assert.equal(conv.contact_id, keep.body.id);

    // The timeline says what changed and who changed it (each line came live, without a reload).
    const timeline = page.locator('.event-line');
    for (const line of [
      /^Priority changed to Urgent · by you ·/,
      /^Label added: vip · by you ·/,
      /^Self-assigned · by you ·/,
      /^Marked as spam · by you ·/,
      /^No longer marked as spam · by you ·/,
      /^Moved to the inbox Billing · by you ·/,
      /^Moved here when two contacts were merged ·/,
    ])
      await timeline.filter({ hasText: line }).waitFor();
    assert.equal(await timeline.filter({ hasText: 'Changed:' }).count(), 0, 'every change is described');
    // Changes made elsewhere arrive live too, worded for the person reading them.
    for (const assignee of [null, seed.ownerId]) {
      const r = await s.request('PATCH', `/v1/conversations/${c.conversation_id}`, { token: seed.apiKey, body: { assignee_id: assignee } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    await timeline.filter({ hasText: /^Unassigned · through the API ·/ }).waitFor();
    await timeline.filter({ hasText: /^Assigned to you · through the API ·/ }).waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('bulk actions on a selection: x and checkboxes, close and move, one update per conversation', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await deliverMail(s, address, { From: `bulk${n}@bulk.example`, Subject: `Bulk ${n}` })).conversation_id);
    const { context, page, errors } = await panelPage();
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations/${ids[2]}`);
    await page
      .locator('.list-pane')
      .getByRole('link', { name: /bulk3@bulk\.example/ })
      .waitFor();
    await page.locator('body').press('x');
    await page.getByRole('checkbox', { name: 'Select Bulk 2' }).check();
    const bar = page.getByRole('toolbar', { name: '2 selected' });
    await bar.waitFor();
    await assertAccessible(page);
    const before = (await s.app.db.selectFrom('events').select('id').where('type', '=', 'conversation.updated').execute()).length;
    await bar.getByRole('button', { name: 'Close' }).click();
    await page.getByText('2 conversations updated').waitFor();
    await page
      .locator('.list-pane')
      .getByRole('link', { name: /bulk2@bulk\.example/ })
      .waitFor({ state: 'detached' });
    const after = (await s.app.db.selectFrom('events').select('id').where('type', '=', 'conversation.updated').execute()).length;
    assert.equal(after - before, 2, 'one conversation.updated per conversation');
    for (const id of [ids[1], ids[2]]) assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.status, 'closed');
    assert.equal((await s.request('GET', `/v1/conversations/${ids[0]}`, { token: seed.apiKey })).body.status, 'open');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('settings: a new inbox with an e-mail channel whose SMTP account is tested, and a chat widget with its snippet', async () => {
    const { context, page, errors } = await panelPage();
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/settings/inboxes`);
    await page.getByLabel('Name', { exact: true }).fill('Partners');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Partners', level: 1 }).waitFor();
    await page.getByLabel('Expected reply time (minutes)').fill('90');
    await page.getByRole('button', { name: 'Save' }).first().click();
    await page.getByText('Saved', { exact: true }).first().waitFor();
    const inboxId = page.url().split('/').pop()!;
    assert.equal((await s.request('GET', `/v1/inboxes/${inboxId}`, { token: seed.apiKey })).body.expected_reply_minutes, 90);

    await page.getByLabel('Name', { exact: true }).last().fill('Partner mail');
    await page.getByLabel('E-mail address').fill('partners@acme.example');
    await page.getByRole('button', { name: 'Create' }).click();
    const mail = page.getByRole('region', { name: 'E-mail: Partner mail' });
    // The outgoing account's fields come first in the card; "Read this mailbox" below has its own.
    const field = (label: string) => mail.getByLabel(label, { exact: true }).first();
    await field('SMTP server').fill('127.0.0.1');
    await field('Port').fill(String(customerSink.port));
    await field('Encryption').selectOption('none');
    await field('User name').fill(SINK_LOGIN.username);
    await field('Password').fill(SINK_LOGIN.password);
    await mail.getByRole('button', { name: 'Save', exact: true }).click();
    await mail.getByText('A password is set.').waitFor();
    assert.equal(await field('Password').inputValue(), '', 'the password is never filled back in');
    await mail.getByRole('button', { name: 'Test connection' }).click();
    await mail.getByText(/Connected and signed in/).waitFor();
    await assertAccessible(page);

    await page.getByRole('button', { name: 'New chat widget' }).click();
    await page.getByLabel('Name', { exact: true }).last().fill('Site chat');
    await page.getByLabel('Sites allowed to show the widget (one origin per line)').last().fill('https://www.acme.example');
    await page.getByRole('button', { name: 'Create' }).click();
    const chat = page.getByRole('region', { name: 'Chat widget: Site chat' });
    const snippet = await chat.getByLabel('Paste this into your site’s HTML:').inputValue();
    assert.match(snippet, /^<script src="http:\/\/127\.0\.0\.1:\d+\/widget\.js" data-key="svc_pk_[^"]+" async><\/script>$/);
    await chat.getByRole('button', { name: 'Delete channel' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete channel' }).click();
    await chat.waitFor({ state: 'detached' });
    await assertAccessible(page);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('the team: invite an agent, who accepts the link and signs in; a one-time sign-in link; members and roles', async () => {
    const owner = await panelPage();
    await owner.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const { page } = owner;
    await page.goto(`${s.url}/settings/members`);
    await page.getByLabel('E-mail address').fill('newagent@acme.example');
    await page.getByLabel('Role', { exact: true }).selectOption('agent');
    await page.getByRole('button', { name: 'Send invite' }).click();
    const link = await page.getByLabel(/Invite link for newagent@acme\.example/).inputValue();
    assert.match(link, /\/invite#/);
    await page.getByText('newagent@acme.example · Agent').waitFor();
    await assertAccessible(page);

    const invited = await panelPage();
    await invited.page.goto(link.replace(/^https?:\/\/[^/]+/, s.url));
    // The page names the workspace, the role and the address before anything is accepted.
    await invited.page.getByText('You are invited to join Acme as Agent, with newagent@acme.example.').waitFor();
    await invited.page.getByLabel('Your name').fill('Nia Agent');
    await invited.page.getByRole('button', { name: 'Accept the invite' }).click();
    await invited.page.waitForURL(/\/conversations/);
    await invited.page.getByRole('heading', { name: 'All' }).waitFor();
    assert.equal(await invited.page.getByRole('link', { name: 'Inboxes and channels' }).count(), 0);
    await invited.page.goto(`${s.url}/settings`);
    assert.equal(await invited.page.getByRole('link', { name: 'API keys' }).count(), 0, 'agents do not see key settings');
    await invited.context.close();

    await page.reload();
    const row = page.getByRole('listitem').filter({ hasText: 'Nia Agent' });
    await row.getByRole('combobox').selectOption('admin');
    await page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/v1/members/'));
    const listed = await s.request('GET', '/v1/members', { token: seed.apiKey });
    assert.equal(listed.body.data.find((m: { email: string }) => m.email === 'newagent@acme.example').role, 'admin');

    // A one-time sign-in link (what `svc person sign-in-link` prints) signs in once.
    const { url } = await createSignInLink(s.app, seed.ownerId);
    const fresh = await panelPage();
    await fresh.page.goto(url.replace(/^https?:\/\/[^/]+/, s.url));
    // The page names the account and signs in only when asked (issue 32: no login CSRF).
    await fresh.page.getByRole('button', { name: /^Sign in as / }).click();
    await fresh.page.waitForURL(/\/conversations/);
    await fresh.page.goto(url.replace(/^https?:\/\/[^/]+/, s.url));
    await fresh.page.getByText(/used, expired or wrong/).waitFor();
    assert.deepEqual([...owner.errors, ...fresh.errors.filter((e) => !/40[01]/.test(e))], []);
    await fresh.context.close();
    await owner.context.close();
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

  test('an agent invited to one inbox (issue 43 item 8) from a Turkish browser gets a Turkish panel (item 7); the limit is edited in the member list', async () => {
    const sales = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const owner = await panelPage();
    await owner.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const { page } = owner;
    await page.goto(`${s.url}/settings/members`);
    await page.getByLabel('E-mail address').fill('limited@acme.example');
    await page.getByLabel('Role', { exact: true }).selectOption('agent');
    const limit = page.getByRole('group', { name: 'Inboxes this agent sees' });
    await limit.getByRole('checkbox', { name: 'Every inbox' }).uncheck();
    await limit.getByRole('checkbox', { name: 'Sales' }).check();
    await limit.getByRole('checkbox', { name: 'Support' }).uncheck();
    await screenshot(page, 'invite-inboxes-en-1280');
    await page.getByRole('button', { name: 'Send invite' }).click();
    const link = await page.getByLabel(/Invite link for limited@acme\.example/).inputValue();
    await page.getByText('limited@acme.example · Agent · Sales').waitFor();
    const invites = await s.request('GET', '/v1/invites', { token: seed.ownerToken });
    assert.deepEqual(invites.body.data.find((i: { email: string }) => i.email === 'limited@acme.example').inbox_ids, [sales.id]);
    await assertAccessible(page);

    // The invited person's browser speaks Turkish: the invite page and then the panel are in Turkish.
    const invited = await panelPage({ locale: 'tr-TR', width: 390, height: 844 });
    await invited.page.goto(link.replace(/^https?:\/\/[^/]+/, s.url));
    await invited.page.getByRole('button', { name: 'Daveti kabul et' }).click();
    await invited.page.waitForURL(/\/conversations/);
    await invited.page.getByRole('heading', { name: 'Tümü' }).waitFor();
    const person = await s.app.db.selectFrom('people').select('locale').where('email', '=', 'limited@acme.example').executeTakeFirstOrThrow();
    assert.equal(person.locale, 'tr', 'kept until the person chooses another');
    await screenshot(invited.page, 'invited-agent-tr-390');
    await invited.context.close();

    // The member list names the agent's inboxes and changes them.
    await page.reload();
    const row = page.getByRole('listitem').filter({ hasText: 'limited@acme.example' });
    await row.getByText('Sales ·').waitFor();
    const edit = row.getByRole('group', { name: 'Inboxes this agent sees' });
    const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/v1/members/'));
    await edit.getByRole('checkbox', { name: 'Support' }).check();
    await saved;
    const members = await s.request('GET', '/v1/members', { token: seed.ownerToken });
    const member = members.body.data.find((m: { email: string }) => m.email === 'limited@acme.example');
    assert.deepEqual([...member.inbox_ids].sort(), [sales.id, seed.inboxId].sort());
    await owner.context.close();
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
