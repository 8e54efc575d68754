// Working on conversations in the panel, in a real browser against a real server: the details
// column (priority, labels, assignee, spam, another inbox, merging contacts, each change in the
// timeline, live) and bulk actions on a selection. The scene: test/helpers/panel-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { assertAccessible, browserSkipReason } from '../helpers/browser.js';
import type { Seed } from '../helpers/fixtures.js';
import { deliverMail } from '../helpers/mail.js';
import { type PanelScene, startPanelScene } from '../helpers/panel-scene.js';
import type { TestServer } from '../helpers/server.js';

describe('triage in the panel, in a browser', { skip: browserSkipReason() }, () => {
  let scene: PanelScene;
  let panelPage: PanelScene['panelPage'];
  let s: TestServer;
  let seed: Seed;
  let address: string;

  before(async () => {
    scene = await startPanelScene();
    ({ s, seed, address, panelPage } = scene);
  });
  after(() => scene?.stop());

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
});
