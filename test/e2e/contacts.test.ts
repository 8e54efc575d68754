// The contacts pages in a real browser, in English at desktop size and in Turkish on a phone:
// the list searches and filters as the team types (and keeps it in the URL), a contact's page shows
// its conversations and external ids, a merge says what moves before it happens, and a deletion
// confirms and returns to the list. Segments: the list's filter saved under a name (Enter in the name
// field), a segment made through the API picked (the filters follow it, a created range too), changed
// and updated, renamed, deleted after a confirmation. Keyboard alone for the search; axe finds no
// serious problems.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('contacts pages in the panel', { skip: browserSkipReason() }, () => {
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

  /** A workspace of its own per run: Ada (open mail, an external id), her duplicate, and Bob (no conversation). */
  async function workspace(): Promise<Seed & { ada: string; duplicate: string; bob: string }> {
    const seed = await seedWorkspace(s.app);
    const address = (await seedEmailChannel(s.app, seed)).address as string;
    const make = async (body: Record<string, unknown>) => {
      const r = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.id as string;
    };
    const ada = await make({ name: 'Ada Lovelace', emails: ['ada@engines.example'], external_ids: [{ inbox_id: seed.inboxId, external_id: 'CRM-1815' }] });
    const duplicate = await make({ name: 'A. Lovelace', emails: ['countess@engines.example'] });
    const bob = await make({ name: 'Bob Stone', emails: ['bob@quarry.example'] });
    await deliverMail(s, address, { From: 'ada@engines.example', Subject: 'Analytical engine order' });
    await deliverMail(s, address, { From: 'countess@engines.example', Subject: 'Second address' });
    const engines = await s.request('POST', '/v1/segments', {
      token: seed.apiKey,
      body: { name: 'Engines', filter: { q: 'engines', created_after: '2020-01-01T00:00:00.000Z' } },
    });
    assert.equal(engines.status, 201, JSON.stringify(engines.body));
    return { ...seed, ada, duplicate, bob };
  }

  for (const [locale, viewport] of [
    ['en-US', { width: 1280, height: 800 }],
    ['tr-TR', { width: 390, height: 844 }],
  ] as const) {
    test(`list, search, contact page, merge with a preview, delete (${locale}, ${viewport.width} px)`, async () => {
      const tr = locale === 'tr-TR';
      const w = await workspace();
      await s.app.db
        .updateTable('people')
        .set({ locale: tr ? 'tr' : 'en' })
        .where('id', '=', w.ownerId)
        .execute();
      const { context, page } = await browser.newPage({ viewport, locale });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: w.ownerToken, url: s.url }]);
      if (tr) {
        await page.goto(`${s.url}/contacts`);
      } else {
        await page.goto(`${s.url}/conversations`);
        await page.getByRole('link', { name: 'Contacts', exact: true }).click();
      }
      await page.getByRole('heading', { name: tr ? 'Kişiler' : 'Contacts', level: 1 }).waitFor();
      const table = page.getByRole('region', { name: tr ? 'Kişiler' : 'Contacts' });
      const rows = () => table.getByRole('row').filter({ has: page.getByRole('rowheader') });
      await page
        .getByRole('status')
        .filter({ hasText: tr ? '3 kişi' : '3 contacts' })
        .waitFor();
      assert.equal(await rows().count(), 3);

      // Keyboard alone: Tab reaches the search field; typing filters (external ids too), and the URL keeps it.
      const search = page.getByRole('searchbox', { name: tr ? 'Kişilerde ara' : 'Search contacts' });
      await search.focus();
      await page.keyboard.type('crm-18');
      await page
        .getByRole('status')
        .filter({ hasText: tr ? '1 kişi' : '1 contact' })
        .waitFor();
      assert.equal(await rows().first().getByRole('rowheader').textContent(), 'Ada Lovelace');
      await page.waitForFunction(() => location.search === '?q=crm-18');
      await search.fill('');
      await page
        .getByRole('status')
        .filter({ hasText: tr ? '3 kişi' : '3 contacts' })
        .waitFor();
      // Only Bob has no open conversation.
      await page.getByLabel(tr ? 'Göster' : 'Show').selectOption('false');
      await page
        .getByRole('status')
        .filter({ hasText: tr ? '1 kişi' : '1 contact' })
        .waitFor();
      assert.equal(await rows().first().getByRole('rowheader').textContent(), 'Bob Stone');
      await assertAccessible(page);
      await screenshot(page, `contacts-list-${locale}-${viewport.width}`);

      // Segments: the filter shown (no open conversation) saved under a name, with the keyboard.
      const status = (count: number) =>
        page
          .getByRole('status')
          .filter({ hasText: tr ? `${count} kişi` : `${count} contact${count === 1 ? '' : 's'}` })
          .waitFor();
      const segmentsStored = async () => (await s.request('GET', '/v1/segments', { token: w.apiKey })).body.data as any[];
      const quietName = tr ? 'Sessizler' : 'Quiet ones';
      await page.getByRole('button', { name: tr ? 'Segment olarak kaydet' : 'Save as segment' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.id === 'segment-name');
      await page.keyboard.type(quietName);
      await page.keyboard.press('Enter');
      await page.getByRole('region', { name: `Segment: ${quietName}` }).waitFor();
      const quiet = (await segmentsStored()).find((x) => x.name === quietName);
      assert.deepEqual(quiet.filter, { has_open: false });
      const picker = page.getByRole('combobox', { name: 'Segment', exact: true });
      assert.equal(await picker.inputValue(), quiet.id);

      // One made through the API: picking it sets the search and the created range it carries.
      const engines = (await segmentsStored()).find((x) => x.name === 'Engines');
      await picker.selectOption({ label: 'Engines' });
      await status(2);
      assert.equal(await search.inputValue(), 'engines');
      assert.equal(await page.getByLabel(tr ? 'Göster' : 'Show').inputValue(), '');
      const from = new Date('2020-01-01T00:00:00.000Z');
      const fromDay = `${from.getFullYear()}-${String(from.getMonth() + 1).padStart(2, '0')}-${String(from.getDate()).padStart(2, '0')}`;
      assert.equal(await page.getByLabel(tr ? 'Ekleme başlangıcı' : 'Added from').inputValue(), fromDay);
      await page.waitForFunction((id) => new URLSearchParams(location.search).get('segment') === id, engines.id);
      const bar = page.getByRole('region', { name: 'Segment: Engines' });
      await bar.getByText(tr ? '“engines” ile eşleşenler' : 'Matches “engines”', { exact: false }).waitFor();

      // Changed filters offer Update segment, which stores them (the API's exact time kept).
      await search.fill('countess');
      await status(1);
      await bar.getByRole('button', { name: tr ? 'Segmenti güncelle' : 'Update segment' }).click();
      await bar.getByRole('button', { name: tr ? 'Segmenti güncelle' : 'Update segment' }).waitFor({ state: 'detached' });
      assert.deepEqual((await segmentsStored()).find((x) => x.id === engines.id).filter, { q: 'countess', created_after: '2020-01-01T00:00:00.000Z' });
      await assertAccessible(page);
      await screenshot(page, `contacts-segments-${locale}-${viewport.width}`);

      // Renamed, then deleted after a confirmation: the list is every contact again.
      await bar.getByRole('button', { name: tr ? 'Segmenti yeniden adlandır' : 'Rename segment' }).click();
      await page.getByLabel(tr ? 'Yeni ad' : 'New name').fill('Countess');
      await page.keyboard.press('Enter');
      const renamed = page.getByRole('region', { name: 'Segment: Countess' });
      await renamed.waitFor();
      await renamed.getByRole('button', { name: tr ? 'Segmenti sil' : 'Delete segment' }).click();
      await page
        .getByRole('dialog')
        .getByRole('button', { name: tr ? 'Segmenti sil' : 'Delete segment' })
        .click();
      await renamed.waitFor({ state: 'detached' });
      await page.waitForFunction(() => document.activeElement?.id === 'contacts-segment');
      await status(3);
      assert.equal(await picker.inputValue(), '');
      assert.deepEqual(
        (await segmentsStored()).map((x) => x.name),
        [quietName],
      );
      // Picking the saved one filters the list again.
      await picker.selectOption({ label: quietName });
      await status(1);
      assert.equal(await rows().first().getByRole('rowheader').textContent(), 'Bob Stone');

      // The duplicate's page: its conversation, then a merge into Ada that says what moves first.
      await page.goto(`${s.url}/contacts/${w.duplicate}`);
      await page.getByRole('heading', { name: 'A. Lovelace', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Second address' }).waitFor();
      await page.getByRole('button', { name: tr ? 'Başka bir kişiyle birleştir' : 'Merge into another contact' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('searchbox').fill('Ada Love');
      await dialog.getByRole('button', { name: /Ada Lovelace/ }).click();
      await dialog.getByText(tr ? 'Konuşmalar: 1' : 'Conversations: 1').waitFor();
      await dialog.getByText(tr ? 'E-posta adresleri: 1' : 'E-mail addresses: 1').waitFor();
      await screenshot(page, `contacts-merge-${locale}-${viewport.width}`);
      await dialog.getByRole('button', { name: tr ? 'Birleştir' : 'Merge', exact: true }).click();
      await page.waitForURL(`${s.url}/contacts/${w.ada}`);
      await page.getByRole('heading', { name: 'Ada Lovelace', level: 1 }).waitFor();
      await page.getByText('countess@engines.example').waitFor();
      // Both conversations are hers now, and her external id is listed.
      await page.getByRole('link', { name: 'Analytical engine order' }).waitFor();
      await page.getByRole('link', { name: 'Second address' }).waitFor();
      await page.getByText('CRM-1815').waitFor();
      await assertAccessible(page);
      await screenshot(page, `contacts-page-${locale}-${viewport.width}`);
      const merged = await s.request('GET', `/v1/contacts/${w.duplicate}`, { token: w.apiKey });
      assert.equal(merged.body.merged_into_id ?? merged.status, merged.status === 200 ? w.ada : 404);

      // Deleting Bob asks first, then goes back to the list, where he is gone.
      await page.goto(`${s.url}/contacts/${w.bob}`);
      await page.getByRole('heading', { name: 'Bob Stone', level: 1 }).waitFor();
      await page.getByRole('button', { name: tr ? 'Kişiyi sil' : 'Delete contact' }).click();
      await page
        .getByRole('dialog')
        .getByRole('button', { name: tr ? 'Kişiyi sil' : 'Delete contact' })
        .click();
      await page.waitForURL(`${s.url}/contacts`);
      await page
        .getByRole('status')
        .filter({ hasText: tr ? '1 kişi' : '1 contact' })
        .waitFor();
      assert.equal((await s.request('GET', `/v1/contacts/${w.bob}`, { token: w.apiKey })).status, 404);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
});
