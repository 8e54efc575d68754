// Automation rules and macros in a real browser, one session: in English at desktop size the owner
// builds a rule (a subject condition; assign to a team and add a label), is told what is missing
// before anything is saved, tries it on past conversations and reads the answer in words with an
// example link, turns it on (only possible after the dry run), then a customer's mail is acted on
// and its run shows in the Runs log; rules reorder by keyboard. A macro is made in Settings › Macros
// and run from the conversation's Macros menu (keyboard), the command palette (Ctrl+K), the
// Shift+M picker and the list's bulk bar. In Turkish on a phone (390 px) the same pages read in
// Turkish, fit the width, and a macro runs from the menu. axe on the main pages; screenshots en/tr
// at 1280 and 390.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type StoredRule = { id: string; name: string; position: number };

async function noSideScroll(page: Page) {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.ok(scroll <= width, `the page scrolls sideways: ${scroll} > ${width}`);
}

describe('automation rules and macros in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let browser: BrowserSession;
  let seed: Seed;
  let address: string;
  let teamId: string;

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    browser = await launchBrowser();
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    await s.app.db.updateTable('people').set({ name: 'Deniz Owner' }).where('id', '=', seed.ownerId).execute();
    address = (await seedEmailChannel(s.app, seed)).address!;
    teamId = (await s.request('POST', '/v1/teams', { token: seed.apiKey, body: { name: 'Billing team' } })).body.id;
    const field = await s.request('POST', '/v1/custom-fields', {
      token: seed.apiKey,
      body: { object: 'conversation', key: 'plan', label: 'Plan', type: 'single_select', options: ['Basic', 'Pro'] },
    });
    assert.equal(field.status, 201, JSON.stringify(field.body));
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await s.request(method, path, { token: seed.apiKey, body });
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  test('en at 1280: build, validate, dry-run, enable a rule; its run; reorder; macros from the menu, palette and Shift+M', async () => {
    const past = await deliverMail(s, address, { Subject: 'Invoice for March', From: 'ana@customer.test' });
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'en-GB' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

    await page.goto(`${s.url}/settings/automation`);
    await page.getByRole('heading', { level: 1, name: 'Automation' }).waitFor();
    await page.getByText('No rules yet.').waitFor();
    await page.getByRole('link', { name: 'New rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'New rule' }).waitFor();

    // Saving an empty rule names what is missing and sends nothing.
    await page.getByRole('button', { name: 'Save (off)' }).click();
    const problems = page.getByRole('alert').filter({ hasText: 'Fix these first:' });
    await problems.getByText('Give the rule a name.').waitFor();
    await problems.getByText('Add at least one action.').waitFor();
    assert.equal((await api('GET', '/v1/automation/rules')).data.length, 0);

    await page.getByLabel('Name', { exact: true }).fill('Billing to the team');
    assert.equal(await page.getByLabel('When', { exact: true }).inputValue(), 'customer_message');
    await page.getByRole('button', { name: 'Add condition' }).click();
    const cond = page.getByRole('group', { name: 'Condition 1' });
    // The new row's field picker has the focus: the keyboard goes on from there.
    assert.equal(await cond.getByLabel('Field').evaluate((el) => el === document.activeElement), true);
    await cond.getByLabel('Field').selectOption({ label: 'Subject' });
    await cond.getByLabel('Test').selectOption({ label: 'contains' });
    await cond.getByLabel('Value').fill('invoice');
    await page.getByRole('button', { name: 'Add action' }).click();
    const first = page.getByRole('group', { name: 'Action 1' });
    await first.getByLabel('Do', { exact: true }).selectOption({ label: 'Assign to a team' });
    await first.getByLabel('Team').selectOption({ label: 'Billing team' });
    await page.getByRole('button', { name: 'Add action' }).click();
    const second = page.getByRole('group', { name: 'Action 2' });
    await second.getByLabel('Do', { exact: true }).selectOption({ label: 'Add a label' });
    await second.getByLabel('Label').fill('billing');
    await page.getByRole('button', { name: 'Add action' }).click();
    const third = page.getByRole('group', { name: 'Action 3' });
    await third.getByLabel('Do', { exact: true }).selectOption({ label: 'Set a custom field' });
    await third.getByLabel('Field', { exact: true }).selectOption({ label: 'Plan' });
    await third.getByLabel('Value', { exact: true }).selectOption({ label: 'Pro' });

    const toggle = page.getByRole('switch', { name: 'Rule is on' });
    assert.equal(await toggle.isDisabled(), true, 'a rule cannot be turned on before its dry run');
    await page.getByLabel('Conversations from the last').selectOption({ label: '7 days' });
    await page.getByRole('button', { name: 'Save and try it' }).click();
    const answer = page.locator('#dry-answer');
    await answer.getByText('Would have matched 1 of 1 conversations: assign to Billing team ×1, add label ‘billing’ ×1, set Plan to ‘Pro’ ×1.').waitFor();
    const example = answer.getByRole('link', { name: 'Invoice for March' });
    assert.equal(await example.getAttribute('href'), `/conversations/${past.conversation_id}`);
    const [stored] = (await api('GET', '/v1/automation/rules')).data;
    assert.deepEqual(
      [stored.name, stored.enabled, stored.trigger, stored.conditions],
      ['Billing to the team', false, { type: 'customer_message' }, { match: 'all', items: [{ field: 'subject', operator: 'contains', value: 'invoice' }] }],
    );
    assert.deepEqual(stored.actions, [
      { type: 'assign_team', team_id: teamId },
      { type: 'add_label', label: 'billing' },
      { type: 'set_custom_field', key: 'plan', value: 'Pro' },
    ]);
    // The dry run changed nothing.
    const untouched = await api('GET', `/v1/conversations/${past.conversation_id}`);
    assert.deepEqual([untouched.team_id, untouched.labels], [null, []]);
    await assertAccessible(page);
    await screenshot(page, 'automation-rule-en-1280');
    await page.setViewportSize({ width: 390, height: 844 });
    await noSideScroll(page);
    await screenshot(page, 'automation-rule-en-390');
    await page.setViewportSize({ width: 1280, height: 800 });

    await answer.getByRole('button', { name: 'Turn the rule on' }).click();
    await page.getByText('Billing to the team is on').first().waitFor();
    assert.equal(await toggle.isChecked(), true);
    assert.equal((await api('GET', `/v1/automation/rules/${stored.id}`)).enabled, true);

    // A customer's mail: the rule's job acts on it and logs its run; another mail does not fit.
    const live = await deliverMail(s, address, { Subject: 'Invoice 42 is wrong', From: 'bo@customer.test' });
    const other = await deliverMail(s, address, { Subject: 'Hello', From: 'cy@customer.test' });
    const ran = async (conversationId: string) =>
      (await api('GET', `/v1/automation/runs?conversation_id=${conversationId}`)).data.some((r: { reason: string | null }) => r.reason !== 'running');
    await waitUntil(async () => (await ran(live.conversation_id)) && (await ran(other.conversation_id)), 20_000, 'the rule runs');
    const acted = await api('GET', `/v1/conversations/${live.conversation_id}`);
    assert.deepEqual([acted.team_id, acted.labels, acted.custom_fields], [teamId, ['billing'], { plan: 'Pro' }]);
    assert.equal((await api('GET', `/v1/conversations/${other.conversation_id}`)).team_id, null);

    await page.goto(`${s.url}/settings/automation/runs`);
    const runs = page.getByRole('region', { name: 'Rule runs, newest first' });
    const row = runs.getByRole('row').filter({ has: page.getByRole('link', { name: 'Invoice 42 is wrong' }) });
    await row.getByText('Did: assign to Billing team, add label ‘billing’, set Plan to ‘Pro’').waitFor();
    await runs.getByRole('row').filter({ hasText: 'Conditions not met' }).first().waitFor();
    await assertAccessible(page);
    await screenshot(page, 'automation-runs-en-1280');

    // Order by keyboard: the moved rule keeps the focus.
    await api('POST', '/v1/automation/rules', {
      name: 'Urgent first',
      trigger: { type: 'conversation_created' },
      actions: [{ type: 'set_priority', priority: 'urgent' }],
    });
    await page.goto(`${s.url}/settings/automation`);
    const down = page.getByRole('button', { name: 'Move Billing to the team down' });
    await down.focus();
    await page.keyboard.press('Enter');
    await page.getByText('Billing to the team is now number 2').first().waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Move Billing to the team up');
    const rows: StoredRule[] = (await api('GET', '/v1/automation/rules')).data;
    const order = rows.sort((a, b) => a.position - b.position).map((r) => r.name);
    assert.deepEqual(order, ['Urgent first', 'Billing to the team']);
    await screenshot(page, 'automation-rules-en-1280');

    // A macro, built with the same actions builder.
    await page.goto(`${s.url}/settings/macros`);
    await page.getByRole('heading', { level: 1, name: 'Macros' }).waitFor();
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'New macro' }) });
    await form.getByLabel('Name', { exact: true }).fill('Escalate');
    await form.getByRole('button', { name: 'Add action' }).click();
    await form.getByRole('group', { name: 'Action 1' }).getByLabel('Do', { exact: true }).selectOption({ label: 'Set the priority' });
    await form.getByRole('group', { name: 'Action 1' }).getByLabel('Priority').selectOption({ label: 'Urgent' });
    await form.getByRole('button', { name: 'Create macro' }).click();
    const macros = page.getByRole('region', { name: 'Macros by name' });
    await macros.getByRole('row').filter({ hasText: 'Escalate' }).getByText('set priority urgent').waitFor();
    await api('POST', '/v1/macros', { name: 'Wait for customer', shared: true, actions: [{ type: 'set_status', status: 'pending' }] });
    await assertAccessible(page);
    await screenshot(page, 'automation-macros-en-1280');

    // From the conversation's Macros menu, by keyboard.
    await page.goto(`${s.url}/conversations/${other.conversation_id}`);
    const menuButton = page.getByRole('button', { name: 'Macros' });
    await menuButton.focus();
    await page.keyboard.press('Enter');
    const menu = page.getByRole('menu', { name: 'Run a macro on this conversation' });
    await menu.getByRole('menuitem', { name: 'Escalate' }).waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'menuitem');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Escalate');
    await assertAccessible(page);
    await page.keyboard.press('Enter');
    await page.getByText('Macro Escalate ran').first().waitFor();
    assert.equal((await api('GET', `/v1/conversations/${other.conversation_id}`)).priority, 'urgent');
    assert.equal(await menuButton.evaluate((el) => el === document.activeElement), true, 'the focus is back on the menu button');

    // From the command palette.
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+k');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.getByRole('combobox').fill('wait');
    await palette.getByRole('option', { name: 'Run macro: Wait for customer' }).waitFor();
    await assertAccessible(page);
    await screenshot(page, 'automation-palette-en-1280');
    await page.keyboard.press('Enter');
    await page.getByText('Macro Wait for customer ran').first().waitFor();
    assert.equal((await api('GET', `/v1/conversations/${other.conversation_id}`)).status, 'pending');

    // Shift+M opens the macro picker; Esc closes it.
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Shift+M');
    const picker = page.getByRole('dialog', { name: 'Run a macro' });
    await picker.getByRole('option', { name: 'Escalate' }).waitFor();
    await page.keyboard.press('Escape');
    await picker.waitFor({ state: 'detached' });

    // On a selection of the list, from its bulk bar.
    await page.getByRole('checkbox', { name: 'Select Invoice 42 is wrong' }).check();
    await page.getByRole('checkbox', { name: 'Select Invoice for March' }).check();
    await page.getByRole('toolbar', { name: '2 selected' }).getByRole('button', { name: 'Run macro…' }).click();
    await page.getByRole('dialog', { name: 'Run a macro · 2 selected' }).getByRole('option', { name: 'Wait for customer' }).click();
    await page.getByText('Macro Wait for customer ran on 2 of 2 conversations').first().waitFor();
    for (const id of [live.conversation_id, past.conversation_id]) assert.equal((await api('GET', `/v1/conversations/${id}`)).status, 'pending');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('tr at 390 (and 1280): the rule, its dry run and runs, macros and the Macros menu read in Turkish and fit a phone', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    const rules = (await api('GET', '/v1/automation/rules')).data;
    const rule = (rules as StoredRule[]).find((r) => r.name === 'Billing to the team');
    assert.ok(rule);
    const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: 'tr-TR', isMobile: true, hasTouch: true });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

    await page.goto(`${s.url}/settings/automation`);
    await page.getByRole('heading', { level: 1, name: 'Otomasyon' }).waitFor();
    await page.getByRole('region', { name: 'Çalışma sırasına göre kurallar' }).getByRole('link', { name: 'Billing to the team', exact: true }).waitFor();
    await noSideScroll(page);
    await screenshot(page, 'automation-rules-tr-390');

    await page.goto(`${s.url}/settings/automation/${rule.id}`);
    await page.getByRole('heading', { level: 1, name: 'Kural: Billing to the team' }).waitFor();
    assert.equal(await page.getByRole('switch', { name: 'Kural açık' }).isChecked(), true);
    await page.getByRole('button', { name: 'Dene', exact: true }).click();
    await page
      .locator('#dry-answer')
      .getByText(/konuşmanın \d+ tanesine uyardı: Billing team ekibine ata ×\d+/)
      .waitFor();
    await noSideScroll(page);
    await assertAccessible(page);
    await screenshot(page, 'automation-rule-tr-390');
    await page.setViewportSize({ width: 1280, height: 800 });
    await screenshot(page, 'automation-rule-tr-1280');
    await page.setViewportSize({ width: 390, height: 844 });

    await page.goto(`${s.url}/settings/automation/runs`);
    await page
      .getByRole('region', { name: 'Kural çalışmaları, en yenisi önce' })
      .getByText('Yaptı: Billing team ekibine ata, ‘billing’ etiketini ekle')
      .waitFor();
    await noSideScroll(page);
    await screenshot(page, 'automation-runs-tr-390');

    await page.goto(`${s.url}/settings/macros`);
    await page.getByRole('region', { name: 'Ada göre makrolar' }).getByText('önceliği acil yap').waitFor();
    await noSideScroll(page);
    await assertAccessible(page);
    await screenshot(page, 'automation-macros-tr-390');

    const conv = await deliverMail(s, address, { Subject: 'Merhaba', From: 'deniz@customer.test' });
    await page.goto(`${s.url}/conversations/${conv.conversation_id}`);
    await page.getByRole('button', { name: 'Makrolar' }).click();
    await page.getByRole('menu', { name: 'Bu konuşmada bir makro çalıştır' }).getByRole('menuitem', { name: 'Escalate' }).click();
    await page.getByText('Escalate makrosu çalıştı').first().waitFor();
    assert.equal((await api('GET', `/v1/conversations/${conv.conversation_id}`)).priority, 'urgent');
    await noSideScroll(page);
    await screenshot(page, 'automation-menu-tr-390');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
