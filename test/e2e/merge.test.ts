// Merge with undo and split in a real browser, in English and Turkish: the duplicate hint, the
// Merge dialog opened by its shortcut and worked by keyboard alone at desktop size, the undo toast,
// the stub's banner and its undo, and Split on a message at phone size (and from the command palette,
// labels copied); the rows checked through
// the API. axe on each page; screenshots at 1280×800 and 390×844.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEXT = {
  en: {
    duplicate: /Possible duplicate/,
    title: 'Merge into another conversation',
    merged: /Merged into/,
    undo: 'Undo',
    undone: 'The merge was undone.',
    stub: 'This conversation was merged into another one.',
    undoStub: /Undo merge/,
    split: 'Split',
    splitDone: 'Split into a new conversation.',
    splitTitle: 'Split into a new conversation',
    paletteQuery: 'split from',
    paletteSplit: 'Split from this message…',
    pickTitle: 'Split from which message?',
  },
  tr: {
    duplicate: /Olası kopya/,
    title: 'Başka bir konuşmayla birleştir',
    merged: /ile birleştirildi/,
    undo: 'Geri al',
    undone: 'Birleştirme geri alındı.',
    stub: 'Bu konuşma başka bir konuşmayla birleştirildi.',
    undoStub: /Birleştirmeyi geri al/,
    split: 'Ayır',
    splitDone: 'Yeni bir konuşmaya ayrıldı.',
    splitTitle: 'Yeni bir konuşmaya ayır',
    paletteQuery: 'iletiden ayır',
    paletteSplit: 'Bu iletiden ayır…',
    pickTitle: 'Hangi iletiden ayrılsın?',
  },
} as const;

describe('merge and split in the panel', { skip: browserSkipReason() }, () => {
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

  const get = async (id: string) => (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body;

  for (const lang of ['en', 'tr'] as const) {
    test(`${lang}: merge by keyboard from the duplicate's page, undo from the toast and from the stub; split on a phone`, async () => {
      const x = TEXT[lang];
      await s.app.db.updateTable('people').set({ locale: lang }).where('id', '=', seed.ownerId).execute();
      const tag = `${lang}${Date.now()}`;
      const first = await deliverMail(s, address, {
        From: 'Ada <ada@customer.example>',
        Subject: `Printer jams ${tag}`,
        'Message-ID': `<p1-${tag}@customer.example>`,
      });
      const second = await deliverMail(s, address, {
        From: 'Ada <ada@customer.example>',
        Subject: `Re: printer jams ${tag}!`,
        'Message-ID': `<p2-${tag}@customer.example>`,
      });
      const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);

      await page.goto(`${s.url}/conversations/${second.conversation_id}`);
      await page.getByText(x.duplicate).waitFor();
      await page.locator('.thread').click({ position: { x: 5, y: 5 } });
      if (lang === 'en') {
        // English opens it from the command palette; Turkish by its shortcut.
        await page.keyboard.press('Control+k');
        await page.getByRole('dialog', { name: 'Command palette' }).getByRole('combobox').fill('merge');
        await page.getByRole('option', { name: 'Merge this conversation into another…' }).waitFor();
        await page.keyboard.press('Enter');
      } else await page.keyboard.press('m');
      const dialog = page.getByRole('dialog', { name: x.title });
      await dialog.waitFor();
      await page.keyboard.type(`Printer jams ${tag}`);
      const target = dialog.locator('.merge-target').first();
      await target.waitFor();
      assert.equal(await dialog.locator('.merge-target').count(), 1, 'only the other conversation is offered');
      await assertAccessible(page);
      await screenshot(page, `panel-merge-dialog-${lang}-desktop`);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL((u) => u.pathname === `/conversations/${first.conversation_id}`);
      const toastEl = page.locator('.merge-toast');
      await toastEl.getByText(x.merged).waitFor();
      // Focused, the toast stays however long the checks below take on a loaded machine.
      await toastEl.getByRole('button', { name: x.undo }).focus();
      assert.equal((await get(second.conversation_id)).merged_into_id, first.conversation_id);
      await page.locator('.thread').getByText('Hello there.').nth(1).waitFor();
      await assertAccessible(page);
      await screenshot(page, `panel-merge-toast-${lang}-desktop`);
      await page.keyboard.press('Enter');
      await page.getByText(x.undone).waitFor();
      await page.waitForURL((u) => u.pathname === `/conversations/${second.conversation_id}`);
      assert.equal((await get(second.conversation_id)).merged_into_id, null);

      // Merged again (through the API); the stub shows where it went and undoes the merge.
      const again = await s.request('POST', `/v1/conversations/${second.conversation_id}/merge`, {
        token: seed.apiKey,
        body: { into_id: first.conversation_id },
      });
      assert.equal(again.status, 200);
      await page.goto(`${s.url}/conversations/${second.conversation_id}`);
      await page.getByText(x.stub).waitFor();
      await assertAccessible(page);
      await screenshot(page, `panel-merge-stub-${lang}-desktop`);
      await page.getByRole('button', { name: x.undoStub }).click();
      await page.getByText(x.undone).waitFor();
      await page.getByText(x.stub).waitFor({ state: 'detached' });
      assert.equal((await get(second.conversation_id)).merged_into_id, null);
      await context.close();

      // Split at phone size: the customer's second question moves out with its answer.
      const q1 = await deliverMail(s, address, { From: 'Bo <bo@customer.example>', Subject: `Login ${tag}`, 'Message-ID': `<l1-${tag}@customer.example>` });
      const q2 = await deliverMail(
        s,
        address,
        {
          From: 'Bo <bo@customer.example>',
          Subject: `Invoice ${tag}`,
          'Message-ID': `<l2-${tag}@customer.example>`,
          'In-Reply-To': `<l1-${tag}@customer.example>`,
        },
        'Second question.\r\n',
      );
      const q3 = await deliverMail(
        s,
        address,
        {
          From: 'Bo <bo@customer.example>',
          Subject: `Re: Invoice ${tag}`,
          'Message-ID': `<l3-${tag}@customer.example>`,
          'In-Reply-To': `<l2-${tag}@customer.example>`,
        },
        'More on it.\r\n',
      );
      assert.equal(q3.conversation_id, q1.conversation_id);
      // Labels go with a split (a copy: the source keeps them too).
      const labelled = await s.request('PATCH', `/v1/conversations/${q1.conversation_id}`, { token: seed.apiKey, body: { labels: [`vip-${lang}`] } });
      assert.equal(labelled.status, 200, JSON.stringify(labelled.body));
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: lang === 'en' ? 'en-GB' : 'tr-TR' });
      await phone.context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      phone.page.on('pageerror', (e) => errors.push(String(e)));
      await phone.page.goto(`${s.url}/conversations/${q1.conversation_id}`);
      const article = phone.page.locator('article.msg').filter({ hasText: 'Second question.' });
      await article.getByRole('button', { name: x.split, exact: true }).click();
      const confirm = phone.page.getByRole('dialog');
      await confirm.waitFor();
      await assertAccessible(phone.page);
      await screenshot(phone.page, `panel-split-dialog-${lang}-phone`);
      await confirm.getByRole('button', { name: x.split, exact: true }).click();
      await phone.page.getByText(x.splitDone).waitFor();
      await phone.page.waitForURL((u) => u.pathname !== `/conversations/${q1.conversation_id}`);
      const newId = new URL(phone.page.url()).pathname.split('/').pop()!;
      const moved = (await s.request('GET', `/v1/conversations/${newId}/messages?order=asc`, { token: seed.apiKey })).body.data.filter(
        (m: any) => m.kind === 'message',
      );
      assert.deepEqual(
        moved.map((m: any) => m.id),
        [q2.message_id, q3.message_id],
      );
      await phone.page.locator('.thread').getByText('More on it.').waitFor();
      const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling (${overflow}px)`);
      await assertAccessible(phone.page);
      await screenshot(phone.page, `panel-split-done-${lang}-phone`);
      assert.deepEqual((await get(newId)).labels, [`vip-${lang}`]);
      assert.deepEqual((await get(q1.conversation_id)).labels, [`vip-${lang}`]);

      // The same from the command palette, with the keyboard alone: Ctrl+K, "Split from this message…",
      // the message chosen in a picker, then the confirmation.
      await phone.page.locator('body').click({ position: { x: 5, y: 5 } });
      await phone.page.keyboard.press('Control+k');
      await phone.page.getByRole('combobox').waitFor();
      await phone.page.keyboard.type(x.paletteQuery);
      await phone.page.getByRole('option', { name: x.paletteSplit }).waitFor();
      await phone.page.keyboard.press('Enter');
      const picker = phone.page.getByRole('dialog', { name: x.pickTitle });
      await picker.waitFor();
      assert.equal(await picker.getByRole('option').count(), 2, 'the two messages of this conversation');
      await phone.page.keyboard.type('More on it');
      assert.equal(await picker.getByRole('option').count(), 1);
      await assertAccessible(phone.page);
      await screenshot(phone.page, `panel-split-picker-${lang}-phone`);
      await phone.page.keyboard.press('Enter');
      await phone.page.getByRole('dialog', { name: x.splitTitle }).waitFor();
      await phone.page.keyboard.press('Enter');
      await phone.page.getByText(x.splitDone).first().waitFor();
      await phone.page.waitForURL((u) => u.pathname !== `/conversations/${newId}`);
      const thirdId = new URL(phone.page.url()).pathname.split('/').pop()!;
      const third = (await s.request('GET', `/v1/conversations/${thirdId}/messages?order=asc`, { token: seed.apiKey })).body.data.filter(
        (m: any) => m.kind === 'message',
      );
      assert.deepEqual(
        third.map((m: any) => m.id),
        [q3.message_id],
      );
      assert.deepEqual((await get(thirdId)).labels, [`vip-${lang}`]);
      await phone.page.locator('.thread').getByText('More on it.').waitFor();
      await phone.context.close();
      assert.deepEqual(errors, []);
    });
  }
});
