// The panel's inbox and member settings, in a real browser against a real server: a new inbox with
// an e-mail channel whose SMTP account is tested and a chat widget with its snippet; inviting an
// agent, who accepts and signs in; a one-time sign-in link; roles; an agent limited to one inbox,
// invited from a Turkish browser. The scene: test/helpers/panel-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { createSignInLink } from '../../src/people/sign-in-links.js';
import { assertAccessible, browserSkipReason, screenshot } from '../helpers/browser.js';
import type { Seed } from '../helpers/fixtures.js';
import { SINK_LOGIN } from '../helpers/mail.js';
import { type PanelScene, startPanelScene } from '../helpers/panel-scene.js';
import type { TestServer } from '../helpers/server.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';

describe('inbox and member settings in the panel, in a browser', { skip: browserSkipReason() }, () => {
  let scene: PanelScene;
  let panelPage: PanelScene['panelPage'];
  let customerSink: SmtpSink;
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    scene = await startPanelScene();
    ({ customerSink, s, seed, panelPage } = scene);
  });
  after(() => scene?.stop());

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
