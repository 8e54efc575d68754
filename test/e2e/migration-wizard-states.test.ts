// The migration wizard in a real browser against a real Dovecot (the scene:
// test/helpers/migration-wizard.ts): every state's screen in Turkish at phone width with exactly
// the migration's allowed_actions, the connection test's rate limit shown as a wait, needs_attention
// explained and fixed with a new password, the choice to keep reading the mailbox live; an agent
// never sees the wizard and the API refuses. The background work runs when the test drains it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAccessible, browserSkipReason, screenshot } from '../helpers/browser.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import { addPerson, type Seed } from '../helpers/fixtures.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { SUPPORT_PASSWORD } from '../helpers/migration.js';
import { startWizardScene, type WizardScene } from '../helpers/migration-wizard.js';
import type { TestServer } from '../helpers/server.js';

const SECOND = 'second@acme.test';

describe('the migration wizard in a browser: every state, and who sees it', { skip: browserSkipReason() ?? dovecotMissing }, () => {
  let scene: WizardScene;
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let api: WizardScene['api'];
  let panelPage: WizardScene['panelPage'];
  let expectScreen: WizardScene['expectScreen'];
  const now = new Date();

  before(async () => {
    scene = await startWizardScene({
      users: [SECOND],
      prepare: async ({ d }) =>
        d.deliver(SECOND, 'INBOX', [
          {
            raw: await buildMail({ from: 'Uma <uma@customer.test>', to: SECOND, subject: 'Hello from Uma', date: daysAgo(now, 2) }),
            flags: 'S',
            receivedAt: daysAgo(now, 2),
          },
          {
            raw: await buildMail({ from: 'Vic <vic@customer.test>', to: SECOND, subject: 'Order 12', date: daysAgo(now, 1) }),
            flags: 'S',
            receivedAt: daysAgo(now, 1),
          },
        ]),
    });
    ({ d, s, seed, api, panelPage, expectScreen } = scene);
  });
  after(() => scene?.stop());

  const drain = () => s.app.jobs.drain();

  test('every state in Turkish offers exactly its allowed actions; needs attention is explained and fixed with a new password', async () => {
    await s.app.db.updateTable('people').set({ locale: 'tr' }).where('id', '=', seed.ownerId).execute();
    try {
      const { page, errors } = await panelPage(seed.ownerToken, { width: 390, height: 844 });
      await page.goto(`${s.url}/settings/migrations/new`);
      await page.getByRole('heading', { name: 'Yeni taşıma' }).waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'tr');
      await assertAccessible(page);

      const created = await api('POST', '/v1/migrations', {
        provider: 'imap',
        source_address: SECOND,
        imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
        inbox_id: seed.inboxId,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id as string;
      /** Opens the migration's page; axe runs on each step's first screen (a state of a step already checked skips it). */
      const visit = async (state: string, axe = true) => {
        await page.goto(`${s.url}/settings/migrations/${id}`);
        const m = await expectScreen(page, id, state);
        if (axe) await assertAccessible(page);
        return m;
      };
      await visit('draft');
      await page.getByRole('button', { name: 'Kaydet ve sına' }).waitFor();
      await api('PUT', `/v1/migrations/${id}/credentials`, { password: SUPPORT_PASSWORD });
      await api('POST', `/v1/migrations/${id}/test`);
      await visit('connected');
      await page.getByText('Hiç okunmaz').first().waitFor();
      await assertAccessible(page);
      // Too many connection tests: the page says how long to wait.
      for (let i = 0; i < 4; i++) assert.equal((await api('POST', `/v1/migrations/${id}/test`)).status, 200);
      await page.goto(`${s.url}/settings/migrations/${id}?step=connect`);
      await page.getByRole('button', { name: 'Bağlantıyı sına' }).click();
      await page.getByText(/Kısa sürede çok fazla sınama yapıldı\. \d+ dk sonra yeniden deneyin\./).waitFor();
      await page.goto(`${s.url}/settings/migrations/${id}?step=map`);
      await page.getByRole('heading', { name: 'Bu çalışma alanına eşle' }).waitFor();
      await assertAccessible(page);
      await api('POST', `/v1/migrations/${id}/scan`);
      await visit('scanning', false);
      await drain();
      await visit('ready');
      await page.getByRole('heading', { name: 'Deneme çalışması' }).waitFor();
      await api('POST', `/v1/migrations/${id}/start`);
      await visit('copying');
      await api('POST', `/v1/migrations/${id}/pause`);
      await visit('paused', false);
      await api('POST', `/v1/migrations/${id}/resume`);

      // The provider revokes the password mid-copy: the copy stops and says why and how to fix it.
      await d.setPassword(SECOND, 'revoked-now');
      d.kick(SECOND);
      await drain();
      const attention = await visit('needs_attention');
      assert.equal(attention.attention.reason, 'login_failed');
      await page.getByTestId('attention-cause').getByText('Posta kutusu parolayı reddetti').waitFor();
      await page.locator('#mig-fix-password').fill('revoked-now');
      await page.getByRole('button', { name: 'Yeni parolayı kaydet' }).click();
      // A new password fixes a refused login: the copy continues by itself.
      await expectScreen(page, id, 'copying');
      await drain();
      await expectScreen(page, id, 'syncing');
      const syncing = await visit('syncing');
      // The choice to keep reading live, in Turkish at phone width, by keyboard.
      assert.equal(syncing.keep_reading.possible, true);
      const keep = page.getByTestId('keep-reading').getByRole('checkbox', {
        name: `Taşımadan sonra bu posta kutusunu ${syncing.keep_reading.channel_name} kanalında canlı okumaya devam et`,
        exact: true,
      });
      assert.equal(await keep.isChecked(), syncing.keep_reading.on);
      await keep.focus();
      await page.keyboard.press('Space');
      await page.getByText(`${syncing.keep_reading.channel_name} taşımadan sonra bu posta kutusunu okumaya devam edecek.`).waitFor();
      assert.equal((await api('GET', `/v1/migrations/${id}`)).body.keep_reading.on, true);
      await screenshot(page, 'migration-wizard-tr-keep-reading');
      await page.getByRole('button', { name: 'Taşımayı iptal et' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Taşımayı iptal et' }).click();
      await expectScreen(page, id, 'cancelled');
      await page.getByText('Bir üye tarafından iptal edildi.').waitFor();
      assert.equal((await api('GET', `/v1/migrations/${id}`)).body.keep_reading.result, null, 'a cancel hands nothing over');
      await visit('cancelled');
      await page.goto(`${s.url}/settings/migrations`);
      await page
        .getByRole('row', { name: new RegExp(SECOND) })
        .getByText('İptal edildi')
        .waitFor();
      await assertAccessible(page);
      assert.deepEqual(errors, []);
    } finally {
      await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
    }
  });

  test('an agent never sees the wizard, and the API refuses the agent', async () => {
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const { page } = await panelPage(agent.token);
    await page.goto(`${s.url}/settings`);
    await page.getByRole('link', { name: 'Members' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Move to the service' }).count(), 0);
    await page.goto(`${s.url}/settings/migrations`);
    await page.getByRole('heading', { name: 'You don’t have access to this page' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'New migration' }).count(), 0);
    const answers = await page.evaluate(async (workspace) => {
      const headers = { 'Svc-Workspace': workspace, 'content-type': 'application/json' };
      const list = await fetch('/v1/migrations', { headers });
      const create = await fetch('/v1/migrations', { method: 'POST', headers, body: JSON.stringify({ provider: 'export_file' }) });
      return [list.status, create.status];
    }, seed.workspaceId);
    assert.deepEqual(answers, [403, 403]);
    await assertAccessible(page);
  });
});
