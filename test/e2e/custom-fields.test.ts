// Custom fields in a real browser (issue 37), one session: in English the owner adds fields in
// Settings › Custom fields by keyboard (a required-before-closing select, a link, a date), moves one
// up, then in a conversation closing is refused and explained, the required select is chosen, a bad
// link is refused inline and a good one becomes a link, and the conversation closes; the contact
// page edits a contact field. In Turkish a field is deleted after a confirmation that says its values
// go; on a 390 px phone the details show the fields without horizontal scrolling. axe on each page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('custom fields in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let browser: BrowserSession;
  let seed: Seed;
  let address: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    browser = await launchBrowser();
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed)).address!;
    await s.app.db.updateTable('people').set({ name: 'Deniz Owner' }).where('id', '=', seed.ownerId).execute();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  const fields = async () => (await s.request('GET', '/v1/custom-fields', { token: seed.apiKey })).body.data as any[];

  test('define fields, refuse and then allow closing, edit values (en, keyboard), delete a field (tr), phone', async () => {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-GB' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

    // --- Settings, by keyboard ---
    await page.goto(`${s.url}/settings/custom-fields`);
    await page.getByRole('heading', { level: 1, name: 'Custom fields' }).waitFor();
    await page.getByText('No conversation fields yet.').waitFor();
    const form = page.getByRole('form', { name: 'New field' });
    await form.getByLabel('Type').focus();
    await form.getByLabel('Type').selectOption('single_select');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Plan');
    assert.equal(await form.getByLabel('Key').inputValue(), 'plan', 'the key follows the label');
    await form.getByLabel('Options').focus();
    await page.keyboard.type('Free\nPro\nTeam');
    await form.getByLabel('Required before closing').focus();
    await page.keyboard.press('Space');
    await form.getByLabel('Label').focus();
    await page.keyboard.press('Enter');
    await page.getByText('Field added').first().waitFor();
    const conversationList = page.getByRole('region', { name: 'Conversation fields' });
    await conversationList.getByText('required to close').waitFor();

    for (const [type, label] of [
      ['link', 'Order link'],
      ['date', 'Renewal date'],
    ] as const) {
      await form.getByLabel('Type').selectOption(type);
      await form.getByLabel('Label').fill(label);
      await form.getByLabel('Label').press('Enter');
      await conversationList.getByText(label, { exact: true }).waitFor();
    }
    // Move "Renewal date" up by keyboard: it ends up before "Order link", the focus stays on it.
    await conversationList.getByRole('button', { name: 'Move Renewal date up' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('.cf-row strong')].map((x) => x.textContent);
      return rows.indexOf('Renewal date') >= 0 && rows.indexOf('Renewal date') < rows.indexOf('Order link');
    });
    assert.deepEqual(
      (await fields()).map((f) => f.key),
      ['plan', 'renewal_date', 'order_link'],
    );
    await assertAccessible(page);
    await screenshot(page, 'panel-custom-fields-settings-en');

    // A contact field, made through the API.
    const tier = await s.request('POST', '/v1/custom-fields', {
      token: seed.ownerToken,
      body: { object: 'contact', key: 'tier', label: 'Tier', type: 'multi_select', options: ['Gold', 'Partner'] },
    });
    assert.equal(tier.status, 201);

    // --- A conversation: closing is refused until Plan is chosen ---
    const { conversation_id: id } = await deliverMail(s, address, { Subject: 'Order 1042', From: 'Ada <ada@example.net>' });
    await page.goto(`${s.url}/conversations/${id}`);
    const details = page.getByRole('complementary', { name: 'Details' });
    await details.getByLabel(/^Plan/).waitFor();
    await page.getByRole('button', { name: 'Close conversation' }).click();
    await page.getByText('This conversation can’t be closed yet: fill in Plan first.').first().waitFor();
    await details.getByText('Required before closing.').waitFor();
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.status, 'open');
    await details.getByLabel(/^Plan/).selectOption('Pro');
    await page.getByText('Plan saved').first().waitFor();
    await page
      .getByText(/Plan set to Pro/)
      .first()
      .waitFor();

    const link = details.getByLabel('Order link');
    await link.fill('ftp://shop.example.com/1042');
    await link.press('Enter');
    await details.getByText('Enter a web address starting with http:// or https://.').waitFor();
    assert.equal((await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.custom_fields.order_link, null);
    await link.fill('https://shop.example.com/orders/1042');
    await link.press('Enter');
    const opened = details.getByRole('link', { name: /Open link/ });
    await opened.waitFor();
    assert.equal(await opened.getAttribute('href'), 'https://shop.example.com/orders/1042');
    await details.getByLabel('Renewal date').fill('2027-01-31');
    await page.getByText('Renewal date saved').first().waitFor();
    await details.getByRole('checkbox', { name: 'Gold' }).check();
    await page.getByText('Tier saved').first().waitFor();
    await assertAccessible(page);
    await screenshot(page, 'panel-custom-fields-details-en');

    await page.getByRole('button', { name: 'Close conversation' }).click();
    await page.getByRole('button', { name: 'Reopen conversation' }).waitFor();
    const stored = (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body;
    assert.deepEqual(stored.custom_fields, { plan: 'Pro', renewal_date: '2027-01-31', order_link: 'https://shop.example.com/orders/1042' });
    assert.deepEqual((await s.request('GET', `/v1/contacts/${stored.contact_id}`, { token: seed.apiKey })).body.custom_fields, { tier: ['Gold'] });

    // --- The contact page ---
    await page.goto(`${s.url}/contacts/${stored.contact_id}`);
    const partner = page.getByRole('checkbox', { name: 'Partner' });
    await partner.waitFor();
    assert.equal(await page.getByRole('checkbox', { name: 'Gold' }).isChecked(), true);
    await partner.focus();
    await page.keyboard.press('Space');
    await page.getByText('Tier saved').first().waitFor();
    assert.deepEqual((await s.request('GET', `/v1/contacts/${stored.contact_id}`, { token: seed.apiKey })).body.custom_fields, { tier: ['Gold', 'Partner'] });
    await assertAccessible(page);

    // --- Turkish: delete a field; the confirmation says the values go ---
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    await page.goto(`${s.url}/settings/custom-fields`);
    await page.getByRole('heading', { level: 1, name: 'Özel alanlar' }).waitFor();
    await page.getByRole('button', { name: 'Alanı sil: Order link' }).click();
    const dialog = page.getByRole('dialog', { name: 'Alanı sil: Order link' });
    await dialog.getByText(/Değeri olan her konuşma kaydından değerleri kaldırılır/).waitFor();
    await assertAccessible(page);
    await screenshot(page, 'panel-custom-fields-delete-tr');
    await dialog.getByRole('button', { name: 'Alanı sil' }).click();
    await page.getByText('Alan silindi').first().waitFor();
    assert.deepEqual(
      (await fields()).map((f) => f.key),
      ['plan', 'renewal_date', 'tier'],
    );
    const values = await s.app.db.selectFrom('custom_field_values').select('value_text').where('owner_id', '=', id).execute();
    assert.ok(!values.some((v) => v.value_text?.startsWith('https://')), 'the link value is gone');

    // --- Phone, 390 px: the details show the fields, nothing scrolls sideways ---
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${s.url}/conversations/${id}`);
    await page.getByRole('button', { name: 'Ayrıntılar' }).first().click();
    const phoneDetails = page.getByRole('complementary', { name: 'Ayrıntılar' });
    await phoneDetails.getByLabel(/^Plan/).waitFor();
    assert.equal(await phoneDetails.getByLabel(/^Plan/).inputValue(), 'Pro');
    assert.equal(await phoneDetails.getByLabel('Renewal date').inputValue(), '2027-01-31');
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 390, `the page is ${wide} px wide`);
    await assertAccessible(page);
    await screenshot(page, 'panel-custom-fields-phone-tr');
    await page.goto(`${s.url}/settings/custom-fields`);
    await page.getByRole('heading', { level: 1, name: 'Özel alanlar' }).waitFor();
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390);
    await screenshot(page, 'panel-custom-fields-settings-phone-tr');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
