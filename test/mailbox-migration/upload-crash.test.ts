// kill -9 of the server while it processes a completed export-file upload (verifying or reading): the
// processing job resumes in the restarted server, the migration becomes connected once, and the file is read once (one
// record per message in the spool, one log line, nothing of the interrupted read left behind).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { RECORD_BYTES } from '../../src/mailbox-migration/sources/spool.js';
import { createLogger } from '../../src/platform/log.js';
import { awaitProcessed, mboxMessage, sendPart, sha256 } from '../helpers/export-files.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

/** About `bytes` of mbox: messages of ~40 KB of base64 text, one customer each. */
function bigMbox(bytes: number): { file: Buffer; messages: number } {
  const chunks: string[] = [];
  let size = 0;
  let n = 0;
  while (size < bytes) {
    const raw =
      `From: Customer ${n} <c${n}@customer.test>\r\nTo: help@acme.test\r\nSubject: Question ${n}\r\nMessage-ID: <q${n}@customer.test>\r\n` +
      `Date: ${new Date(Date.UTC(2024, 0, 1) + n * 60_000).toUTCString()}\r\n\r\n${crypto
        .randomBytes(30_000)
        .toString('base64')
        .replace(/(.{76})/g, '$1\r\n')}\r\n`;
    const m = mboxMessage(raw);
    chunks.push(m);
    size += Buffer.byteLength(m);
    n++;
  }
  return { file: Buffer.from(chunks.join('')), messages: n };
}

describe('the upload processing job after kill -9', () => {
  let te: TestEnv;
  let app: App | undefined;
  const children: ChildServer[] = [];

  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await te?.cleanup();
  });

  test('killed while processing, it resumes in the restarted server; the file is read once', async () => {
    te = await testEnv();
    const { file, messages } = bigMbox(120 * 1024 * 1024);
    const first = await spawnServer(te.env);
    children.push(first);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(app);
    const call = async (url: string, method: string, p: string, body?: unknown) => {
      const res = await fetch(url + p, {
        method,
        headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const id = (await call(first.url, 'POST', '/v1/migrations', { provider: 'export_file', inbox_id: seed.inboxId })).body.id as string;
    const PART = 8 * 1024 * 1024;
    let parts = 0;
    for (let at = 0; at < file.length; at += PART)
      assert.equal((await sendPart(first.url, seed.apiKey, id, ++parts, file.subarray(at, at + PART))).status, 200);
    const accepted = await call(first.url, 'POST', `/v1/migrations/${id}/upload/complete`, { parts, sha256: sha256(file) });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));

    // Killed once a run holds the upload (it claimed it and is verifying or reading), before it ends.
    for (const started = Date.now(); ; ) {
      const row = await app.db.selectFrom('mailbox_migration_uploads').select('runner').where('migration_id', '=', id).executeTakeFirstOrThrow();
      if (row.runner) break;
      assert.ok(Date.now() - started < 120_000, 'the job began');
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(await first.kill('SIGKILL'), null);
    const atKill = await app.db.selectFrom('mailbox_migration_uploads').selectAll().where('migration_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(atKill.state, 'processing', `killed in the middle (${atKill.phase}, ${atKill.messages} of ${messages} messages)`);
    const dir = path.join(te.dataDir, 'migration-uploads', id);

    const second = await spawnServer(te.env);
    children.push(second);
    const read = await awaitProcessed(second.url, seed.apiKey, id, { timeoutMs: 180_000 });
    assert.equal(read.state, 'read', JSON.stringify(read.processing));
    assert.equal(read.file.messages, messages);
    assert.equal(read.file.sha256, sha256(file));
    assert.equal((await call(second.url, 'GET', `/v1/migrations/${id}`)).body.state, 'connected');
    assert.equal(fs.statSync(path.join(dir, 'read', 'index')).size, messages * RECORD_BYTES, 'every message once in the spool');
    assert.deepEqual(fs.readdirSync(path.join(dir, 'tmp')), [], 'nothing of the interrupted read is left');
    const log = await app.db.selectFrom('mailbox_migration_log').select('action').where('migration_id', '=', id).execute();
    assert.deepEqual(
      log.map((l) => l.action).filter((a) => a.startsWith('upload')),
      ['upload_completed'],
    );
    const updated = await app.db.selectFrom('events').select('data').where('type', '=', 'migration.updated').execute();
    assert.equal(updated.filter((e) => JSON.parse(e.data).migration?.state === 'connected').length, 1, 'connected once');
    await second.kill('SIGTERM');
  });
});
