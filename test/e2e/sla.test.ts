// SLA in a real browser at phone size, in English and Turkish: the inbox's SLA card (a negative
// target refused naming the field, nothing stored; targets for every conversation and for urgent
// ones saved), and the list's clock for three conversations — in time, in the last 20 % (amber) and
// breached (red) — with the target named on hover, and "Due first" ordering them by due time (kept
// in the address). axe on each page; screenshots.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { checkSla } from '../../src/sla/service.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/lifecycle.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEXT = {
  en: {
    byPriority: 'Other targets per priority',
    title: 'SLA targets',
    every: 'Every conversation',
    urgent: 'Priority: Urgent',
    first: 'First response',
    save: 'Save SLA targets',
    saved: 'Saved',
    left: /left$/,
    over: /over$/,
    hover: /^First response due /,
    reports: 'SLA',
    byMember: 'Breaches by member',
    sort: 'Sort',
  },
  tr: {
    byPriority: 'Önceliğe göre farklı hedefler',
    title: 'SLA hedefleri',
    every: 'Tüm konuşmalar',
    urgent: 'Öncelik: Acil',
    first: 'İlk yanıt',
    save: 'SLA hedeflerini kaydet',
    saved: 'Kaydedildi',
    left: /kaldı$/,
    over: /gecikti$/,
    hover: /^İlk yanıt için son zaman /,
    reports: 'SLA',
    byMember: 'Üyeye göre aşımlar',
    sort: 'Sıralama',
  },
} as const;

const MIN = 60_000;

describe('SLA in the panel', { skip: browserSkipReason() }, () => {
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

  for (const lang of ['en', 'tr'] as const) {
    test(`${lang}: SLA targets from a phone; a negative one is refused with its field`, async () => {
      const x = TEXT[lang];
      await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.ownerToken, body: { default: null } });
      await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
      const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/settings/inboxes/${seed.inboxId}`);
      const card = page.getByRole('region', { name: x.title });
      await card.waitFor();
      const every = card.getByRole('group', { name: x.every, exact: true });
      await every.getByLabel(x.first).fill('-5');
      await card.getByRole('button', { name: x.save, exact: true }).click();
      await card.getByRole('alert').filter({ hasText: 'default.first_response_minutes' }).waitFor();
      assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.apiKey })).body.default, null, 'nothing stored');

      await every.getByLabel(x.first).fill('120');
      await card.getByText(x.byPriority, { exact: true }).click();
      await card.getByRole('group', { name: x.urgent, exact: true }).getByLabel(x.first).fill('30');
      await assertAccessible(page);
      await card.getByRole('button', { name: x.save, exact: true }).click();
      await page.getByText(x.saved, { exact: true }).first().waitFor();
      const stored = (await s.request('GET', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.apiKey })).body;
      assert.deepEqual(stored.default, { first_response_minutes: 120, next_response_minutes: null, resolution_minutes: null });
      assert.deepEqual(stored.by_priority, { urgent: { first_response_minutes: 30, next_response_minutes: null, resolution_minutes: null } });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
      await card.getByRole('heading', { name: x.title }).scrollIntoViewIfNeeded();
      await screenshot(page, `panel-sla-settings-${lang}-phone`);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`${lang}: the list's clock — in time, amber in the last 20 %, red when breached`, async () => {
      const x = TEXT[lang];
      await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.ownerToken, body: { default: { first_response_minutes: 100 } } });
      await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
      const ids: Record<'ok' | 'warn' | 'breached', string> = { ok: '', warn: '', breached: '' };
      for (const state of ['breached', 'warn', 'ok'] as const) {
        const mail = await deliverMail(s, address, { From: `Ada <ada-${state}-${lang}@customer.example>`, Subject: `Clock ${state} ${lang}` });
        ids[state] = mail.conversation_id;
      }
      // The server counts the clock from the customer's message; the list only shows it. Moving a
      // conversation's start into the past puts it where it would be after that much time.
      const now = Date.now();
      const startedAgo = { ok: 10 * MIN, warn: 90 * MIN, breached: 130 * MIN };
      for (const state of ['ok', 'warn', 'breached'] as const) {
        const row = await s.app.db.selectFrom('conversations').select('sla').where('id', '=', ids[state]).executeTakeFirstOrThrow();
        const st = JSON.parse(row.sla!);
        const start = now - startedAgo[state];
        st.first_response = {
          ...st.first_response,
          started_at: new Date(start).toISOString(),
          due_at: new Date(start + 100 * MIN).toISOString(),
          warn_at: new Date(start + 80 * MIN).toISOString(),
          breached_at: state === 'breached' ? new Date(start + 100 * MIN).toISOString() : null,
        };
        await s.app.db
          .updateTable('conversations')
          .set({ sla: JSON.stringify(st), sla_due_at: st.first_response.due_at })
          .where('id', '=', ids[state])
          .execute();
      }
      const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/conversations`);
      const clockOf = (state: keyof typeof ids) => page.locator(`a.row[href*="/conversations/${ids[state]}"] .sla-clock`);
      await clockOf('ok').waitFor();
      assert.equal(await clockOf('ok').getAttribute('data-sla'), 'ok');
      assert.equal(await clockOf('warn').getAttribute('data-sla'), 'warn');
      assert.equal(await clockOf('breached').getAttribute('data-sla'), 'breached');
      assert.match((await clockOf('ok').innerText()).trim(), x.left);
      assert.match((await clockOf('warn').innerText()).trim(), x.left);
      assert.match((await clockOf('breached').innerText()).trim(), x.over);
      assert.match((await clockOf('breached').getAttribute('title')) ?? '', x.hover);
      const colour = (state: keyof typeof ids) => clockOf(state).evaluate((el) => getComputedStyle(el).color);
      const [ok, warn, breached] = [await colour('ok'), await colour('warn'), await colour('breached')];
      assert.notEqual(warn, ok);
      assert.notEqual(breached, warn);
      assert.equal(breached, 'rgb(196, 38, 46)', 'red (--sla-breach, light theme)');
      assert.equal(warn, 'rgb(125, 84, 0)', 'amber (--sla-warn, light theme)');
      await assertAccessible(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
      await screenshot(page, `panel-sla-list-${lang}-phone`);

      // Latest activity first (the newest mail, "ok", leads); "Due first" puts the breached one first.
      const order = () =>
        page.evaluate(
          (wanted) => {
            const hrefs = [...document.querySelectorAll('a.row')].map((a) => (a.getAttribute('href') ?? '').split('?')[0]);
            return wanted.map((id) => hrefs.findIndex((h) => h.endsWith(`/conversations/${id}`)));
          },
          [ids.breached, ids.warn, ids.ok],
        );
      const [b0, w0, o0] = await order();
      assert.ok(o0 < w0 && w0 < b0, `latest activity first: ${[b0, w0, o0]}`);
      await page.getByLabel(x.sort, { exact: true }).selectOption('due');
      await page.waitForURL(/[?&]sort=due/);
      await waitUntil(
        async () => {
          const [b, w, o] = await order();
          return b >= 0 && b < w && w < o;
        },
        15_000,
        'breached, amber, in time: due first',
      );
      await page.reload();
      await clockOf('ok').waitFor();
      const [b1, w1, o1] = await order();
      assert.ok(b1 < w1 && w1 < o1, `the order is in the address and survives a reload: ${[b1, w1, o1]}`);
      assert.deepEqual(errors, []);
      await context.close();
    });

    test(`${lang}: the report's SLA card counts a breach the check job recorded`, async () => {
      const x = TEXT[lang];
      await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.ownerToken, body: { default: { first_response_minutes: 100 } } });
      await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
      const id = (await deliverMail(s, address, { From: `Ada <ada-report-${lang}@customer.example>`, Subject: `Report ${lang}` })).conversation_id;
      await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.ownerToken, body: { assignee_id: seed.ownerId } });
      // Its due time moved into the past (as after 100 minutes); the check job's run records the breach.
      const row = await s.app.db.selectFrom('conversations').select('sla').where('id', '=', id).executeTakeFirstOrThrow();
      const st = JSON.parse(row.sla!);
      const past = new Date(Date.now() - MIN).toISOString();
      st.first_response = { ...st.first_response, due_at: past, warn_at: past };
      await s.app.db
        .updateTable('conversations')
        .set({ sla: JSON.stringify(st) })
        .where('id', '=', id)
        .execute();
      const checked = await checkSla(s.app, { conversationId: id });
      assert.deepEqual(
        checked.notices.map((n) => n.kind),
        ['breached'],
      );
      const expected = (await s.request('GET', '/v1/reports', { token: seed.apiKey })).body.sla;
      const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      await page.goto(`${s.url}/reports`);
      const card = page.getByRole('region', { name: x.reports, exact: true });
      await card.waitFor();
      const first = card.getByRole('row', { name: new RegExp(`^${x.first}`) });
      const cells = await first.getByRole('cell').allInnerTexts();
      assert.deepEqual(cells.slice(0, 2), [String(expected.first_response.met), String(expected.first_response.breached)]);
      assert.ok(expected.first_response.breached >= 1);
      await card.getByRole('heading', { name: x.byMember }).waitFor();
      await assertAccessible(page);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `panel-sla-report-${lang}-phone`);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
