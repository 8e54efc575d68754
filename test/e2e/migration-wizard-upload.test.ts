// The wizard's export-file upload in a real browser: an mbox of three 8 MiB parts, each with its
// SHA-256 computed in the page; the upload is cut after two parts, the page is reloaded, it says
// what the server already holds, and choosing the same file again sends only the missing part;
// then the server processes the file in the background while the page shows its progress (from
// migration.progress), and the migration is connected. A file that is not an export ends with the
// cause shown, in English and in Turkish.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inTransaction } from '../../src/db/transaction.js';
import { announceEvents } from '../../src/events/service.js';
import { recordUploadProgress } from '../../src/mailbox-migration/upload/service.js';
import { systemClock } from '../../src/platform/clock.js';
import { assertAccessible, type BrowserSession, browserSkipReason, launchBrowser, screenshot } from '../helpers/browser.js';
import { mbox, sha256 } from '../helpers/export-files.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { buildMail, daysAgo } from '../helpers/mailbox.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PART = 8 * 1024 * 1024;

describe('the export-file upload of the migration wizard', { skip: browserSkipReason() }, () => {
  let s: TestServer;
  let seed: Seed;
  let browser: BrowserSession;
  let dir: string;
  let file: string;
  let bytes: Buffer;
  const MESSAGES = 44;

  before(async () => {
    s = await startTestServer({ clock: systemClock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app, { name: 'Acme' });
    const now = new Date();
    const messages = [];
    // 44 messages of about 400 KB: a little over two parts.
    for (let n = 0; n < MESSAGES; n++) {
      messages.push(
        await buildMail({
          from: `Customer ${n} <c${n}@customer.test>`,
          to: 'support@acme.test',
          subject: `Question ${n}`,
          messageId: `q${n}@customer.test`,
          date: daysAgo(now, n + 1),
          text: `Question ${n}.\n${'Some words of a long message. '.repeat(13_000)}`,
        }),
      );
    }
    bytes = mbox(messages);
    assert.ok(bytes.length > 2 * PART && bytes.length < 3 * PART, `the file has three parts (${bytes.length} bytes)`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wizard-upload-'));
    file = path.join(dir, 'support.mbox');
    fs.writeFileSync(file, bytes);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('cut after two parts, resumed after a reload with only the missing part sent', async () => {
    const { context, page } = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const parts: { part: number; sha: string | null }[] = [];
    page.on('request', (r) => {
      const m = /\/upload\/parts\/(\d+)$/.exec(r.url());
      if (m && r.method() === 'POST') parts.push({ part: Number(m[1]), sha: r.headers()['x-part-sha256'] ?? null });
    });

    await page.goto(`${s.url}/settings/migrations/new`);
    await page.getByLabel('Provider').selectOption('export_file');
    await page.getByText('You will upload the export').waitFor();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/settings\/migrations\/mig_/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByRole('heading', { name: 'Upload the export file' }).waitFor();
    await assertAccessible(page);

    // The connection drops when the third part is sent.
    await page.route('**/upload/parts/3', (route) => route.abort('connectionreset'));
    await page.getByLabel('Export file', { exact: true }).setInputFiles(file);
    // Hashing and sending two parts of 16 MB: generous for a loaded machine.
    await page.getByText('The upload stopped').waitFor({ timeout: 120_000 });
    await page.unroute('**/upload/parts/3');
    const held = (await s.request('GET', `/v1/migrations/${id}/upload`, { token: seed.apiKey })).body;
    assert.deepEqual(
      held.data.map((p: { part: number }) => p.part),
      [1, 2],
    );
    assert.deepEqual(
      held.data.map((p: { sha256: string }) => p.sha256),
      [sha256(bytes.subarray(0, PART)), sha256(bytes.subarray(PART, 2 * PART))],
      'the checksums were computed in the page',
    );

    // After a reload the page says what is held; the same file again sends only part 3.
    await page.reload();
    await page.getByTestId('upload-resume').getByText('2 part(s)').waitFor();
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-upload-resume');
    const before = parts.length;
    await page.getByLabel('Export file', { exact: true }).setInputFiles(file);
    // Every part is there: complete answered at once and the file waits for its job (the runner is
    // stopped in this test), which the page says, with where it stands.
    const processing = page.getByTestId('upload-processing');
    await processing.getByText('Uploaded. Checking the file: 0 B of').waitFor({ timeout: 30_000 });
    await page.getByText('You may leave this page').waitFor();
    assert.equal((await s.request('GET', `/v1/migrations/${id}/upload`, { token: seed.apiKey })).body.state, 'processing');
    await assertAccessible(page);
    await screenshot(page, 'migration-wizard-upload-processing');
    // Progress reaches the page from migration.progress alone (no request of its own meanwhile).
    let uploadReads = 0;
    page.on('request', (r) => {
      if (r.url().endsWith(`/v1/migrations/${id}/upload`) && r.method() === 'GET') uploadReads++;
    });
    await s.app.db
      .updateTable('mailbox_migration_uploads')
      .set({ phase: 'reading', done_bytes: 5, total_bytes: 10, messages: 7 })
      .where('migration_id', '=', id)
      .execute();
    const row = await s.app.db.selectFrom('mailbox_migration_uploads').selectAll().where('migration_id', '=', id).executeTakeFirstOrThrow();
    const m0 = await s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await inTransaction(s.app.db, (trx) => recordUploadProgress({ db: trx, clock: s.app.clock }, m0, row));
    announceEvents(s.app);
    await processing.getByText('Reading the file: 7 messages so far (50%)').waitFor();
    assert.equal(uploadReads, 0, 'the progress came from migration.progress');
    await s.app.db
      .updateTable('mailbox_migration_uploads')
      .set({ phase: 'verifying', done_bytes: 0, total_bytes: bytes.length, messages: 0 })
      .where('migration_id', '=', id)
      .execute();
    await s.app.jobs.drain();
    await page.locator('h1 [data-state="connected"]').waitFor({ timeout: 60_000 });
    assert.deepEqual(
      parts.slice(before).map((p) => p.part),
      [3],
    );
    assert.equal(parts.at(-1)!.sha, sha256(bytes.subarray(2 * PART)));
    const m = (await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey })).body;
    assert.equal(m.state, 'connected');
    const upload = (await s.request('GET', `/v1/migrations/${id}/upload`, { token: seed.apiKey })).body;
    assert.equal(upload.file.messages, MESSAGES);
    assert.equal(upload.file.sha256, sha256(bytes));
    await page.getByRole('link', { name: 'Next: map' }).waitFor();
    // The wording is the export file's: only the file is read, no password to change.
    assert.match(await page.getByTestId('read-only').innerText(), /Only the uploaded file is read: nothing is sent to the provider\./);
    assert.equal(await page.locator('.mig-actions [data-action="scan"]').innerText(), 'Read the file’s headers for the dry run');
    assert.equal(await page.locator('.mig-actions [data-action="credentials"]').count(), 0);
    await assertAccessible(page);
    assert.deepEqual(errors, []);
  });

  test('a file that is not an export: the cause is shown once it was processed, in English and in Turkish', async () => {
    const notExport = path.join(dir, 'notes.mbox');
    fs.writeFileSync(notExport, 'These are my notes, not a mailbox.\n');
    for (const [locale, cause] of [
      ['en', 'The file was not accepted: it is neither a zip archive nor an mbox file.'],
      ['tr', 'Dosya kabul edilmedi: ne bir zip arşivi ne de bir mbox dosyası.'],
    ] as const) {
      await s.app.db.updateTable('people').set({ locale }).where('id', '=', seed.ownerId).execute();
      const { context, page } = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await context.addCookies([{ name: 'svc_session', value: seed.ownerToken, url: s.url }]);
      const id = (await s.request('POST', '/v1/migrations', { token: seed.apiKey, body: { provider: 'export_file', inbox_id: seed.inboxId } })).body.id;
      await page.goto(`${s.url}/settings/migrations/${id}`);
      await page.locator('#mig-file').setInputFiles(notExport);
      await page.getByTestId('upload-processing').waitFor({ timeout: 30_000 });
      // The page says so as it sends complete: the job is there once the server holds it processing.
      for (const started = Date.now(); ; ) {
        const u = await s.request('GET', `/v1/migrations/${id}/upload`, { token: seed.apiKey });
        if (u.body.state === 'processing') break;
        assert.ok(Date.now() - started < 30_000, `complete reached the server (${u.body.state})`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await s.app.jobs.drain();
      const alert = page.getByTestId('upload-failed');
      await alert.getByText(cause).waitFor({ timeout: 30_000 });
      assert.equal(await alert.getAttribute('data-reason'), 'not_an_export');
      assert.equal(await alert.getAttribute('role'), 'alert');
      await assertAccessible(page);
      if (locale === 'tr') await screenshot(page, 'migration-wizard-upload-refused-tr');
      // The migration stays a draft and the page takes a new file.
      assert.equal((await s.request('GET', `/v1/migrations/${id}`, { token: seed.apiKey })).body.state, 'draft');
      assert.equal(await page.locator('#mig-file').isEnabled(), true);
      await context.close();
    }
    await s.app.db.updateTable('people').set({ locale: 'en' }).where('id', '=', seed.ownerId).execute();
  });
});
