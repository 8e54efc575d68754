// Saved replies and signatures in a real browser: set them up in Settings, insert a saved reply
// with # using only the keyboard, send it, and read the mail at the customer's mail server: the
// placeholders are filled in and the member's and the inbox's signatures follow. axe on each page,
// with the picker open too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { INGRESS_SECRET, ingressPort, SINK_LOGIN, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('saved replies and signatures in the panel', { skip: browserSkipReason() }, () => {
  let customerSink: SmtpSink;
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;

  before(async () => {
    customerSink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed, { smtpPort: customerSink.port })).address!;
    await s.app.db.updateTable('people').set({ name: 'Grace Hopper' }).where('id', '=', seed.ownerId).execute();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    await customerSink?.close();
  });

  test('set up in Settings, insert with # by keyboard, and the mail carries the rendered text and signatures', async () => {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

    // Settings › Saved replies & signatures.
    await page.goto(`${s.url}/settings/saved-replies`);
    await page.getByRole('heading', { name: 'Saved replies & signatures' }).waitFor();
    await page.getByText('No saved replies yet.').waitFor();
    const mySignature = page.locator('#my-signature');
    await mySignature.waitFor();
    await page.locator('#inbox-signature').waitFor();
    await assertAccessible(page);

    // The composer's formatted editor, by keyboard: a Markdown shortcut, a line break (Shift+Enter).
    await page.waitForFunction(() => document.getElementById('my-signature')?.tagName === 'DIV');
    await mySignature.click();
    await page.keyboard.type('{{member.name}}');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('Acme **billing**');
    await mySignature.locator('strong', { hasText: 'billing' }).waitFor();
    await page.getByRole('region', { name: 'My signature' }).getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved', { exact: true }).first().waitFor();
    const inboxSignature = page.locator('#inbox-signature');
    await inboxSignature.fill('{{inbox.name}} · acme.example');
    await page.getByRole('region', { name: 'Inbox signature' }).getByRole('button', { name: 'Save' }).click();

    // An unknown placeholder is refused with its name, and nothing is saved.
    await page.getByLabel('Name', { exact: true }).fill('broken');
    await page.getByLabel('Text', { exact: true }).fill('Hi {{contact.nickname}}');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('alert').filter({ hasText: '{{contact.nickname}}' }).waitFor();

    await page.getByLabel('Name', { exact: true }).fill('refund');
    const replyText = page.getByLabel('Text', { exact: true });
    await replyText.click();
    await page.keyboard.press('Control+a');
    await page.keyboard.type('Hi {{contact.first_name}}, your refund for “{{conversation.subject}}” is **on its way**.');
    await replyText.locator('strong', { hasText: 'on its way' }).waitFor();
    await page.getByLabel('Everyone in the workspace').check();
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: '#refund', exact: true }).waitFor();
    assert.equal(await replyText.textContent(), '', 'the form is empty again');
    // A second one to move through, edited and then a throwaway deleted.
    await page.getByLabel('Name', { exact: true }).fill('refund delay');
    await page.getByLabel('Text', { exact: true }).fill('Sorry, refunds take 5 days.');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: 'Edit #refund delay' }).click();
    await page.getByRole('heading', { name: 'Edit #refund delay' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'reply-name', 'Edit moves the focus to the form');
    await page.getByLabel('Text', { exact: true }).fill('Sorry {{contact.name}}, refunds take 5 days.');
    await page.getByRole('button', { name: 'Save', exact: true }).last().click();
    await page.getByRole('cell', { name: 'Sorry {{contact.name}}, refunds take 5 days.' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('temp');
    await page.getByLabel('Text', { exact: true }).fill('temporary');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: 'Delete #temp' }).click();
    await page.getByRole('dialog').waitFor();
    await assertAccessible(page);
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('cell', { name: '#temp', exact: true }).waitFor({ state: 'detached' });
    await assertAccessible(page);
    await screenshot(page, 'panel-saved-replies-settings');
    const stored = await s.app.db
      .selectFrom('saved_replies')
      .select(['name', 'scope', 'html'])
      .where('workspace_id', '=', seed.workspaceId)
      .orderBy('name_key')
      .execute();
    assert.deepEqual(stored, [
      {
        name: 'refund',
        scope: 'workspace',
        html: '<p>Hi {{contact.first_name}}, your refund for “{{conversation.subject}}” is <strong>on its way</strong>.</p>',
      },
      { name: 'refund delay', scope: 'personal', html: '<p>Sorry {{contact.name}}, refunds take 5 days.</p>' },
    ]);

    // A customer writes; the owner answers with # and the keyboard only.
    await sendToIngress(ingressPort(s), {
      from: 'Ada Lovelace <ada@customer.example>',
      to: address,
      subject: 'Double charge',
      text: 'I was charged twice.',
      messageId: '<ada-sr@customer.example>',
    });
    // The formatted editor arrives only after the first keys (as on a slow link): what is typed
    // before goes into the plain stand-in and moves over with the picker still open.
    let releaseEditor!: () => void;
    const editorHeld = new Promise<void>((resolve) => (releaseEditor = resolve));
    await page.route('**/assets/tiptap-*', async (route) => {
      await editorHeld;
      await route.continue();
    });
    await page.goto(`${s.url}/conversations`);
    await page.getByRole('link', { name: /Ada Lovelace/ }).waitFor({ timeout: 20_000 });
    await page.keyboard.press('j');
    await page.waitForURL(/\/conversations\/cv_/);
    await page.getByRole('article', { name: 'Ada Lovelace' }).getByText('I was charged twice.').waitFor();
    await page.keyboard.press('r');
    const box = page.locator('#composer-body');

    // Esc closes the picker and keeps the text box focused.
    await page.keyboard.type('#zzz');
    const noMatch = page.getByRole('status').filter({ hasText: 'No saved reply matches “zzz”.' });
    await noMatch.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'TEXTAREA', 'typed before the editor loaded');
    releaseEditor();
    await page.waitForFunction(() => document.activeElement?.id === 'composer-body' && document.activeElement.tagName === 'DIV');
    await noMatch.waitFor();
    assert.equal(await box.textContent(), '#zzz');
    await page.keyboard.press('Escape');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'composer-body');
    for (let i = 0; i < 4; i++) await page.keyboard.press('Backspace');

    await page.keyboard.type('#ref');
    const listbox = page.getByRole('listbox', { name: 'Saved replies' });
    await listbox.getByRole('option').nth(1).waitFor();
    assert.deepEqual(await listbox.getByRole('option').evaluateAll((els) => els.map((e) => e.querySelector('.picker-name')!.firstChild!.textContent)), [
      '#refund',
      '#refund delay',
    ]);
    await assertAccessible(page);
    const active = () => box.getAttribute('aria-activedescendant');
    // The text box names the selected option (set on the editor just after the list renders).
    await page.waitForFunction(() => {
      const selected = document.querySelector('[role="option"][aria-selected="true"]');
      return selected !== null && document.getElementById('composer-body')?.getAttribute('aria-activedescendant') === selected.id;
    });
    const first = await active();
    const activeIs = (id: string | null, same: boolean) =>
      page.waitForFunction(([want, eq]) => (document.getElementById('composer-body')?.getAttribute('aria-activedescendant') === want) === eq, [
        id,
        same,
      ] as const);
    await page.keyboard.press('ArrowDown');
    await activeIs(first, false);
    await page.keyboard.press('ArrowUp');
    await activeIs(first, true);
    await page.keyboard.press('Enter');
    await listbox.waitFor({ state: 'hidden' });
    const expectedText = 'Hi Ada, your refund for “Double charge” is on its way.';
    await page.waitForFunction((want) => document.getElementById('composer-body')?.textContent === want, expectedText);
    await page.keyboard.type(' Thanks!');
    assert.equal(await box.textContent(), `${expectedText} Thanks!`, 'the caret is after the inserted reply');
    assert.equal(await box.locator('strong').textContent(), 'on its way', 'the saved reply keeps its formatting');

    const sent = customerSink.messages.length;
    await page.keyboard.press('Control+Enter');
    const [mail] = (await customerSink.waitFor(sent + 1)).slice(sent);
    assert.deepEqual(mail.to, ['ada@customer.example']);
    assert.equal(mail.parsed.text!.trimEnd(), `${expectedText} Thanks!\n\n-- \nGrace Hopper\nAcme billing\n\n-- \nSupport · acme.example`);
    assert.match(String(mail.parsed.html), /is <strong>on its way<\/strong>\. Thanks!/);
    assert.match(String(mail.parsed.html), /<div class="svc-signature"><p>-- <\/p><p>Grace Hopper<br \/>Acme <strong>billing<\/strong><\/p><\/div>/);
    // The conversation shows what was sent, signature included.
    await page.getByRole('article', { name: 'You' }).getByText('Acme billing').waitFor();
    await screenshot(page, 'panel-saved-reply-sent');

    // The inbox's own settings page shows (and edits) its signature too.
    await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
    const onInboxPage = page.locator('#inbox-signature');
    await onInboxPage.waitFor();
    await page.waitForFunction(() => document.getElementById('inbox-signature')?.tagName === 'DIV');
    assert.equal(await onInboxPage.textContent(), '{{inbox.name}} · acme.example');
    await assertAccessible(page);
    assert.deepEqual(errors, []);
    await context.close();

    // Turkish at phone width: the formatted editors fit, their toolbar is in Turkish, nothing scrolls sideways.
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'tr-TR' });
    await phone.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    await phone.page.goto(`${s.url}/settings/saved-replies`);
    await phone.page.waitForFunction(() => document.getElementById('reply-body')?.tagName === 'DIV');
    const toolbar = phone.page.getByRole('toolbar', { name: 'Biçimlendirme' });
    assert.equal(await toolbar.count(), 3, 'my signature, the inbox signature and the reply text');
    await phone.page.getByLabel('Metin', { exact: true }).click();
    await phone.page.keyboard.type('- **bir**');
    await phone.page.locator('#reply-body li strong', { hasText: 'bir' }).waitFor();
    assert.ok(await phone.page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling');
    await assertAccessible(phone.page);
    await screenshot(phone.page, 'panel-saved-replies-tr-390');
    await phone.context.close();
  });
});
