// Issue 32 in a real browser: a page on another origin that opens someone else's sign-in link signs
// nobody in and replaces no session (item 6); a stranger who joined a thread is shown as themself
// (item 3); a file name's right-to-left override is visible (item 9); a chat visitor's typed address
// is marked unverified with one click to merge into the contact that owns it (item 2).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { findOrCreatePerson } from '../../src/people/service.js';
import { createSignInLink } from '../../src/people/sign-in-links.js';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, rloAttachmentBody, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ATTACKER = 'attacker@evil.example';

describe('trust holes in the browser', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;
  let evil: http.Server;
  let evilUrl: string;
  let ownerEmail: string;
  let linkToken = '';

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed)).address!;
    ownerEmail = (await s.request('GET', '/v1/me', { token: seed.ownerToken })).body.person.email;
    await findOrCreatePerson(s.app, { email: ATTACKER });
    // Another origin (another port) whose page sends the visitor to the attacker's sign-in link.
    evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Win a prize</title><script>location = ${JSON.stringify(`${s.url}/sign-in/link#${linkToken}`)};</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    evil?.close();
    await s?.stop();
  });

  const sessionCookie = async (context: { cookies(url: string): Promise<{ name: string; value: string }[]> }) =>
    (await context.cookies(s.url)).find((c) => c.name === 'svc_session')?.value;
  const linkUsed = async () => {
    const rows = await s.app.db.selectFrom('sign_in_links').select('used_at').execute();
    return rows.some((r) => r.used_at !== null);
  };

  test('a page elsewhere that opens someone’s sign-in link: the panel asks, signs nobody in, and keeps a signed-in session', async () => {
    linkToken = (await createSignInLink(s.app, (await findOrCreatePerson(s.app, { email: ATTACKER })).id)).token;

    // Signed out: the page names the account and waits.
    const out = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'en-US' });
    await out.page.goto(evilUrl);
    await out.page.getByRole('heading', { name: 'Signing in' }).waitFor();
    await out.page.getByText(`Sign in as ${ATTACKER}?`).waitFor();
    assert.equal(await sessionCookie(out.context), undefined, 'no session was made');
    assert.equal(await linkUsed(), false, 'the link is not used');
    await assertAccessible(out.page);
    await screenshot(out.page, 'trust-link-ask-390');
    await out.page.getByRole('link', { name: 'Cancel' }).click();
    await out.page.waitForURL(/\/sign-in/);
    await out.context.close();

    // Signed in (in Turkish): the page names both accounts; staying keeps the owner's session.
    assert.equal((await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { locale: 'tr' } })).status, 200);
    const signedIn = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'tr-TR' });
    await signedIn.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await signedIn.page.goto(evilUrl);
    await signedIn.page.getByText(`${ownerEmail} olarak giriş yaptınız.`, { exact: false }).waitFor();
    await signedIn.page.getByRole('button', { name: `${ATTACKER} hesabına geç` }).waitFor();
    await assertAccessible(signedIn.page);
    await screenshot(signedIn.page, 'trust-link-switch-tr-1280');
    assert.equal(await sessionCookie(signedIn.context), seed.ownerToken);
    assert.equal(await linkUsed(), false);
    await signedIn.page.getByRole('link', { name: `${ownerEmail} olarak kal` }).click();
    await signedIn.page.waitForURL(/\/conversations/);
    assert.equal(await sessionCookie(signedIn.context), seed.ownerToken, 'the owner is still signed in');
    await signedIn.context.close();
    await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { locale: 'en' } });

    // The server refuses a silent switch even from the panel's own origin.
    const silent = await fetch(`${s.url}/v1/auth/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: s.url, cookie: `svc_session=${seed.ownerToken}` },
      body: JSON.stringify({ token: linkToken }),
    });
    assert.equal(silent.status, 409);
    assert.equal(((await silent.json()) as { error: { code: string } }).error.code, 'signed_in_as_other');

    // The person the link is for signs in with the keyboard alone.
    const own = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await own.page.goto(`${s.url}/sign-in/link#${linkToken}`);
    const button = own.page.getByRole('button', { name: `Sign in as ${ATTACKER}` });
    await button.waitFor();
    for (let i = 0; i < 10 && !(await button.evaluate((b) => b === document.activeElement)); i++) await own.page.keyboard.press('Tab');
    await own.page.keyboard.press('Enter');
    await own.page.waitForURL(/\/conversations/);
    assert.ok(await sessionCookie(own.context), 'signed in');
    assert.equal(await linkUsed(), true);
    await own.context.close();
  });

  test('a stranger in the thread is shown as themself; a right-to-left override in a file name is visible', async () => {
    const first = await deliverMail(s, address, { From: 'Alice Customer <alice@cust.example>', Subject: 'My invoice', 'Message-ID': '<tb-1@cust.example>' });
    const boundary = 'tb-boundary';
    await deliverMail(
      s,
      address,
      {
        From: 'Alice Customer <mallory@evil.example>',
        Subject: 'Re: My invoice',
        'Message-ID': '<tb-2@evil.example>',
        'In-Reply-To': '<tb-1@cust.example>',
        'MIME-Version': '1.0',
        'Content-Type': `multipart/mixed; boundary="${boundary}"`,
      },
      rloAttachmentBody(boundary, 'Please pay to the new account in the attached invoice.'),
    );
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations/${first.conversation_id}`);
    const stranger = page.locator('article.msg', { hasText: 'Please pay to the new account' });
    await stranger.locator('.author', { hasText: 'Alice Customer <mallory@evil.example>' }).waitFor();
    await stranger.getByText('Not this conversation’s contact: replies still go to Alice Customer.').waitFor();
    await stranger.getByText('invoice_fdp.exe').waitFor();
    assert.ok(!(await page.locator('body').innerText()).includes('\u202e'));
    const own = page.locator('article.msg', { hasText: 'Hello there.' });
    assert.equal(await own.locator('.author').innerText(), 'Alice Customer');
    assert.equal(await own.locator('.sender-note').count(), 0);
    await assertAccessible(page);
    await screenshot(page, 'trust-thread-joiner-1280');
    await context.close();
  });

  test('a chat visitor’s typed address is marked unverified, with one click to merge into its owner', async () => {
    const owner = await deliverMail(s, address, { From: 'Carol Customer <carol@cust.example>', Subject: 'Order', 'Message-ID': '<tb-3@cust.example>' });
    const origin = 'https://shop.example.com';
    const key = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Chat', origins: [origin], allowAnonymous: true })
    ).public_key!;
    const claim = await s.request('POST', '/v1/widget/sessions', {
      headers: { origin },
      body: { public_key: key, email: 'carol@cust.example', name: 'Carol?' },
    });
    assert.equal(claim.status, 201);
    const chat = await s.request('POST', '/v1/widget/conversations', { headers: { origin }, token: claim.body.token, body: { body: 'Change my address' } });
    assert.equal(chat.status, 201);
    const ownerContact = (await s.request('GET', `/v1/conversations/${owner.conversation_id}`, { token: seed.apiKey })).body.contact_id;

    const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'en-US' });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await page.goto(`${s.url}/conversations/${chat.body.conversation.id}`);
    await page
      .getByRole('button', { name: /details/i })
      .first()
      .click();
    const card = page.locator('.unverified-email');
    await card.getByText('Unverified').waitFor();
    await card.getByText('This address belongs to Carol Customer.', { exact: false }).waitFor();
    await assertAccessible(page);
    await screenshot(page, 'trust-unverified-390');
    await card.getByRole('button', { name: 'Merge into Carol Customer' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Merge' }).click();
    await page.getByText('Contacts merged').waitFor();
    const moved = await s.request('GET', `/v1/conversations/${chat.body.conversation.id}`, { token: seed.apiKey });
    assert.equal(moved.body.contact_id, ownerContact);
    await context.close();
  });
});
