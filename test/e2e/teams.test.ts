// Teams in a real browser, in English and Turkish: the owner sets themself available, makes a team,
// picks its members and inbox and turns on round robin with a capacity (stored as chosen); a new
// mail in that inbox joins the team and is assigned to the owner in the transaction that stores it;
// the sidebar's "My teams" and the team's own view list it, its details column names the team and
// its timeline says what happened automatically. axe on each page; screenshots at desktop size.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEXT = {
  en: {
    settings: 'Teams',
    always: 'Always available',
    name: 'Name',
    create: 'Create team',
    team: 'Support',
    mode: 'Auto-assignment',
    roundRobin: 'Round robin',
    capacity: 'Open conversations per member',
    saved: 'Team saved',
    mine: 'My teams',
    teamsNav: 'Teams',
    teamField: 'Team',
    moved: 'Moved to the team Support',
    auto: 'automatically',
    assigned: 'Assigned to you',
  },
  tr: {
    settings: 'Ekipler',
    always: 'Her zaman müsait',
    name: 'Ad',
    create: 'Ekip oluştur',
    team: 'Destek',
    mode: 'Otomatik atama',
    roundRobin: 'Sırayla',
    capacity: 'Üye başına açık konuşma',
    saved: 'Ekip kaydedildi',
    mine: 'Ekiplerim',
    teamsNav: 'Ekipler',
    teamField: 'Ekip',
    moved: 'Destek ekibine taşındı',
    auto: 'otomatik olarak',
    assigned: 'Size atandı',
  },
} as const;

describe('teams in the panel', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let browser: BrowserSession;

  before(async () => {
    s = await startTestServer({ clock: systemClock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
  });

  for (const lang of ['en', 'tr'] as const) {
    test(`${lang}: make a team with round robin, then its new conversation in "My teams" and the team's view`, async () => {
      const x = TEXT[lang];
      const seed: Seed = await seedWorkspace(s.app, { name: 'Acme' });
      const agent = await addPerson(s.app, seed.workspaceId, 'agent', `ayse-${lang}@example.com`);
      await s.app.db.updateTable('people').set({ locale: lang, name: 'Deniz Owner' }).where('id', '=', seed.ownerId).execute();
      await s.app.db.updateTable('people').set({ name: 'Ayşe Agent' }).where('id', '=', agent.personId).execute();
      const address = (await seedEmailChannel(s.app, seed)).address!;
      const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

      await page.goto(`${s.url}/settings/teams`);
      await page.getByRole('heading', { level: 1, name: x.settings }).waitFor();
      await page.getByLabel(x.always).check();
      await page.getByLabel(x.name, { exact: true }).first().fill(x.team);
      await page.getByRole('button', { name: x.create }).click();
      const editor = page.locator('form', { has: page.getByRole('heading', { name: x.team }) });
      await editor.waitFor();
      await editor.getByRole('checkbox', { name: 'Deniz Owner' }).check();
      await editor.getByRole('checkbox', { name: 'Ayşe Agent' }).check();
      await editor.getByRole('checkbox', { name: 'Support', exact: true }).check();
      await editor.getByLabel(x.mode).selectOption({ label: x.roundRobin });
      await editor.getByLabel(x.capacity).fill('3');
      await editor.locator('button[type=submit]').click();
      await page.getByText(x.saved).first().waitFor();
      await page.locator('.team-member-available', { hasText: 'Deniz Owner' }).waitFor();
      await assertAccessible(page);
      await screenshot(page, `panel-teams-settings-${lang}`);

      const stored = (await s.request('GET', '/v1/teams', { token: seed.apiKey })).body.data;
      assert.equal(stored.length, 1);
      assert.deepEqual(
        [stored[0].name, stored[0].assignment, stored[0].capacity, stored[0].member_ids, stored[0].inbox_ids],
        [x.team, 'round_robin', 3, [seed.ownerId, agent.personId].sort(), [seed.inboxId]],
      );
      assert.equal((await s.request('GET', '/v1/me/availability', { token: seed.ownerToken })).body.availability, 'available');

      // A new mail joins the team and goes to the only available member (the agent is offline).
      const { conversation_id: id } = await deliverMail(s, address, { Subject: `Refund ${lang}` });
      const conv = (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body;
      assert.deepEqual([conv.team_id, conv.assignee_id], [stored[0].id, seed.ownerId]);

      await page.goto(`${s.url}/conversations`);
      const nav = page.getByRole('navigation').first();
      await nav.getByRole('link', { name: x.mine }).click();
      await page
        .getByRole('heading', { name: x.mine })
        .or(page.getByRole('region', { name: x.mine }))
        .first()
        .waitFor();
      const row = page.getByRole('link', { name: new RegExp(`Refund ${lang}`) });
      await row.waitFor();
      // The team's own link in the sidebar's team list (the seeded inbox is also called Support).
      await nav.getByRole('list', { name: x.teamsNav, exact: true }).getByRole('link', { name: x.team, exact: true }).click();
      await page.waitForURL(new RegExp(`team=${stored[0].id}`));
      await row.waitFor();
      await row.click();
      await page.getByLabel(x.teamField, { exact: true }).waitFor();
      assert.equal(await page.getByLabel(x.teamField, { exact: true }).inputValue(), stored[0].id);
      await page.getByText(x.moved).first().waitFor();
      const line = (await page.getByText(x.moved).first().textContent()) ?? '';
      assert.ok(line.includes(x.assigned) && line.includes(x.auto), line);
      await assertAccessible(page);
      await screenshot(page, `panel-teams-view-${lang}`);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
