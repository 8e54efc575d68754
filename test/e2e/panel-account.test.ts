// My account and contact details in a real browser: a member changes their name and the panel's
// language (the panel switches to Turkish at once, and stays so after a reload), a bad name is
// refused with a clear message; in a conversation's details the contact's name and addresses are
// edited and custom attributes (text, number, yes/no) added, edited and removed, with clear errors.
// axe on each changed page in both languages.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('my account and contact attributes in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let browser: BrowserSession;

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    address = (await seedEmailChannel(s.app, seed)).address!;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  const me = async () => (await s.request('GET', '/v1/me', { token: seed.ownerToken })).body.person;

  async function ownerPage() {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
    return { context, page, errors };
  }

  test('name and language: saved, the panel switches language at once, a blank name is refused', async () => {
    const { context, page, errors } = await ownerPage();
    await page.goto(`${s.url}/settings/account`);
    await page.getByRole('heading', { name: 'My account', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Name and language' }).waitFor();
    await assertAccessible(page);

    const name = page.getByLabel('Name', { exact: true });
    await name.fill('   ');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'A name is 1 to 100 characters.' }).waitFor();
    assert.equal((await me()).name, null, 'nothing was saved');

    await name.fill('  Grace Hopper ');
    await page.getByLabel('Language of the panel').selectOption('tr');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    // At once, without a reload: the page is in Turkish.
    await page.getByRole('heading', { name: 'Hesabım', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Ad ve dil' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'tr');
    assert.equal(await page.getByLabel('Ad', { exact: true }).inputValue(), 'Grace Hopper');
    const saved = await me();
    assert.deepEqual([saved.name, saved.locale], ['Grace Hopper', 'tr']);
    await assertAccessible(page);

    // The team list shows the new name; a reload stays in Turkish.
    await page.reload();
    await page.getByRole('heading', { name: 'Hesabım', exact: true }).waitFor();
    await page.goto(`${s.url}/settings/members`);
    await page.getByText('Grace Hopper').first().waitFor();

    // And back to English.
    await page.goto(`${s.url}/settings/account`);
    await page.getByLabel('Panelin dili').selectOption('en');
    await page.getByRole('button', { name: 'Kaydet', exact: true }).click();
    await page.getByRole('heading', { name: 'My account', exact: true }).waitFor();
    assert.equal((await me()).locale, 'en');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('notification channels this server cannot use say why they are greyed out (issue 43 item 13)', async () => {
    const { context, page, errors } = await ownerPage();
    await page.goto(`${s.url}/settings/account`);
    const why = page.getByText('Push is greyed out: this server has no Web Push keys.', { exact: false });
    await why.waitFor();
    await page.getByText('E-mail is greyed out: this server has no mail account to send from', { exact: false }).waitFor();
    const push = page.locator('input[type=checkbox][aria-describedby="notif-off-push"]');
    assert.ok((await push.count()) > 0, 'the greyed-out push boxes point at the reason');
    assert.equal(await push.first().isDisabled(), true);
    assert.equal(await page.locator('input[type=checkbox][aria-describedby="notif-off-realtime"]').count(), 0, 'in-app needs no reason');
    await assertAccessible(page);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('contact details: name and addresses, attributes of each kind added, edited and removed, errors shown', async () => {
    const { conversation_id: id } = await deliverMail(s, address, { From: 'Deniz <deniz@cust.example>', Subject: 'Upgrade please' });
    const contactId = (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.contact_id as string;
    const contact = async () => (await s.request('GET', `/v1/contacts/${contactId}`, { token: seed.apiKey })).body;
    const { context, page, errors } = await ownerPage();
    await page.goto(`${s.url}/conversations/${id}`);
    const details = page.getByRole('complementary', { name: 'Details' });
    await details.getByText('No attributes yet.').waitFor();

    // Name and addresses; a bad address is refused with the server's message and changes nothing.
    await details.getByRole('button', { name: 'Edit contact' }).click();
    await details.getByLabel('Name', { exact: true }).fill('Deniz Kaya');
    await details.getByLabel('E-mail addresses, one per line').fill('deniz@cust.example\nnot an address');
    await details.getByRole('button', { name: 'Save', exact: true }).click();
    await details.getByRole('alert').filter({ hasText: 'not an e-mail address' }).waitFor();
    assert.equal((await contact()).name, 'Deniz');
    await details.getByLabel('E-mail addresses, one per line').fill('deniz@cust.example\ndeniz.kaya@work.example');
    await details.getByRole('button', { name: 'Save', exact: true }).click();
    await details.getByText('Deniz Kaya', { exact: true }).waitFor();
    await details.getByText('deniz.kaya@work.example').waitFor();
    assert.deepEqual((await contact()).emails, ['deniz@cust.example', 'deniz.kaya@work.example']);

    // Attributes: text, number, yes/no.
    const add = async (key: string, type: 'Text' | 'Number' | 'Yes/no', value: string) => {
      await details.getByRole('button', { name: 'Add attribute' }).click();
      const form = details.getByRole('form', { name: 'Add attribute' });
      await form.getByLabel('Attribute name').fill(key);
      await form.getByLabel('Type').selectOption({ label: type });
      if (type === 'Yes/no') await form.getByLabel('Value').selectOption({ label: value });
      else await form.getByLabel('Value').fill(value);
      await form.getByRole('button', { name: 'Save' }).click();
      return form;
    };
    await add('plan', 'Text', 'Pro');
    await details.locator('.attr').filter({ hasText: 'plan' }).waitFor();
    const seats = await add('seats', 'Number', 'twelve');
    await seats.getByRole('alert').filter({ hasText: 'Enter a number, such as 42 or 9.5.' }).waitFor();
    await assertAccessible(page);
    await seats.getByLabel('Value').fill('12');
    await seats.getByRole('button', { name: 'Save' }).click();
    await details.locator('.attr').filter({ hasText: 'seats' }).waitFor();
    await add('vip', 'Yes/no', 'Yes');
    await details.locator('.attr').filter({ hasText: 'vip' }).filter({ hasText: 'Yes' }).waitFor();
    assert.deepEqual((await contact()).attributes, { plan: 'Pro', seats: 12, vip: true });

    // Edit one (the name stays), remove another.
    await details.getByRole('button', { name: 'Edit seats' }).click();
    const edit = details.getByRole('form', { name: 'Edit seats' });
    assert.equal(await edit.getByLabel('Value').inputValue(), '12');
    await edit.getByLabel('Value').fill('15');
    await edit.getByRole('button', { name: 'Save' }).click();
    await details.locator('.attr').filter({ hasText: '15' }).waitFor();
    await details.getByRole('button', { name: 'Remove plan' }).click();
    await details.locator('.attr').filter({ hasText: 'plan' }).waitFor({ state: 'detached' });
    assert.deepEqual((await contact()).attributes, { seats: 15, vip: true });

    // A structured value set through the API is shown, can be removed, but not edited here.
    const structured = await s.request('PATCH', `/v1/contacts/${contactId}`, { token: seed.apiKey, body: { attributes: { address: { city: 'Izmir' } } } });
    assert.equal(structured.status, 200, JSON.stringify(structured.body));
    await page.reload();
    await details.locator('.attr').filter({ hasText: '{"city":"Izmir"}' }).waitFor();
    assert.equal(await details.getByRole('button', { name: 'Edit address' }).count(), 0);
    assert.equal(await details.getByRole('button', { name: 'Remove address' }).count(), 1);

    // The same details in Turkish pass axe too.
    await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { locale: 'tr' } });
    await page.reload();
    await page.getByRole('button', { name: 'Özellik ekle' }).click();
    await page.getByRole('form', { name: 'Özellik ekle' }).waitFor();
    await assertAccessible(page);
    await s.request('PATCH', '/v1/me', { token: seed.ownerToken, body: { locale: 'en' } });
    assert.deepEqual(errors, []);
    await context.close();
  });
});
