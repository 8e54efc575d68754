// kill -9 of the server while mail arrives over SMTP: every message that got its 250 is stored,
// nothing is stored twice when the senders retry after the restart, and no message is half-written.
// The second case kills it while a group-committed batch waits for its flush to disk.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import nodemailer from 'nodemailer';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, seedEmailChannel } from '../helpers/mail.js';
import { type ChildServer, runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

const COUNT = 120;

function smtpPort(server: ChildServer): number {
  const line = JSON.parse(server.stderrLines.find((l) => l.includes('"msg":"listening"'))!) as { smtp: string };
  return Number(line.smtp.slice(line.smtp.lastIndexOf(':') + 1));
}

describe('inbound mail survives kill -9', () => {
  let te: TestEnv;
  let app: App | undefined;
  const children: ChildServer[] = [];

  before(async () => {
    te = await testEnv({ SVC_INGRESS_SECRET: 'crash-secret' });
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await te.cleanup();
  });

  test('acknowledged mail is kept, retried mail is stored once', async () => {
    assert.equal((await runSvc(['migrate', 'up'], { env: te.env })).code, 0);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(app);
    const address = (await seedEmailChannel(app, seed)).address!;
    const messages = Array.from({ length: COUNT }, (_, i) => ({
      id: `crash-${i}@cust.example`,
      raw: rawMail({ To: address, From: `sender${i % 7}@cust.example`, Subject: `crash ${i}`, 'Message-ID': `<crash-${i}@cust.example>` }, `body ${i}\r\n`),
    }));

    const first = await spawnServer(te.env);
    children.push(first);
    const acked = new Set<string>();
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort(first), ignoreTLS: true, pool: true, maxConnections: 5 });
    const sends = messages.map((m) =>
      transport.sendMail({ raw: m.raw, envelope: { from: 'x@cust.example', to: [address] } }).then(
        () => {
          acked.add(m.id);
          if (acked.size === 30) void first.kill('SIGKILL');
        },
        () => undefined,
      ),
    );
    await Promise.all(sends);
    transport.close();
    assert.ok(acked.size >= 30 && acked.size < COUNT, `killed mid-stream (${acked.size} acknowledged)`);

    // The senders retry everything they sent; the restarted server stores what it lacks, once.
    const second = await spawnServer(te.env);
    children.push(second);
    const retry = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort(second), ignoreTLS: true, pool: true, maxConnections: 5 });
    await Promise.all(messages.map((m) => retry.sendMail({ raw: m.raw, envelope: { from: 'x@cust.example', to: [address] } })));
    retry.close();
    await second.kill('SIGTERM');

    const rows = await app.db
      .selectFrom('messages')
      .select(['id', 'mail_message_id', 'raw_storage_key', 'conversation_id'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('direction', '=', 'in')
      .execute();
    const ids = rows.map((r) => r.mail_message_id);
    assert.equal(rows.length, COUNT, 'every message once');
    assert.equal(new Set(ids).size, COUNT);
    for (const id of acked) assert.ok(ids.includes(id), `acknowledged ${id} is stored`);
    for (const r of rows) assert.ok(await app.storage.exists(r.raw_storage_key!), 'its original is in storage');
    const convs = await app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(convs.length, COUNT);
  });

  test('a batch committed but not yet on disk gets no 250; nothing half-stored, retried mail stored once', async () => {
    const batchEnv = await testEnv({ SVC_INGRESS_SECRET: 'crash-secret' });
    let batchApp: App | undefined;
    try {
      assert.equal((await runSvc(['migrate', 'up'], { env: batchEnv.env })).code, 0);
      batchApp = buildServices(loadConfig(batchEnv.env), { log: createLogger({ level: 'error', write: () => {} }) });
      const seed = await seedWorkspace(batchApp);
      const address = (await seedEmailChannel(batchApp, seed)).address!;
      const count = 60;
      const messages = Array.from({ length: count }, (_, i) => ({
        id: `batch-${i}@cust.example`,
        raw: rawMail({ To: address, From: `sender${i % 5}@cust.example`, Subject: `batch ${i}`, 'Message-ID': `<batch-${i}@cust.example>` }, `body ${i}\r\n`),
      }));
      // SQLite: the WAL flush after a batch's commit is held; Postgres (whose commit is its flush):
      // a message's .eml flush, before its transaction.
      const held =
        batchApp.dialect === 'sqlite'
          ? { HOLD_FLUSH_MATCH: '-wal', HOLD_FLUSH_AT: '4' }
          : { HOLD_FLUSH_MATCH: `${path.sep}eml${path.sep}`, HOLD_FLUSH_AT: '12' };
      const preload = pathToFileURL(path.resolve('dist/test/helpers/hold-flush.js')).href;
      const first = await spawnServer({ ...batchEnv.env, ...held, NODE_OPTIONS: `--import ${preload}` });
      children.push(first);
      const acked = new Set<string>();
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort(first), ignoreTLS: true, pool: true, maxConnections: 5 });
      const sends = messages.map((m) =>
        transport.sendMail({ raw: m.raw, envelope: { from: 'x@cust.example', to: [address] } }).then(
          () => acked.add(m.id),
          () => undefined,
        ),
      );
      while (!first.stderrLines.some((l) => l.includes('test: flush held'))) {
        assert.equal(first.child.exitCode, null, 'the server runs until the flush is held');
        await sleep(20);
      }
      // Let the senders' other messages reach the server and queue behind the held flush.
      await sleep(300);
      const ackedAtKill = new Set(acked);
      await first.kill('SIGKILL');
      await Promise.all(sends);
      transport.close();
      assert.deepEqual(acked, ackedAtKill, 'no answer after the kill');

      const stored = async () =>
        batchApp!.db
          .selectFrom('messages')
          .select(['mail_message_id', 'raw_storage_key', 'raw_size', 'raw_sha256', 'conversation_id'])
          .where('workspace_id', '=', seed.workspaceId)
          .where('direction', '=', 'in')
          .execute();
      const afterKill = await stored();
      const storedAtKill = new Set(afterKill.map((r) => r.mail_message_id!));
      for (const id of acked) assert.ok(storedAtKill.has(id), `acknowledged ${id} is stored`);
      assert.ok(acked.size < count, 'some mail was not acknowledged');
      if (batchApp.dialect === 'sqlite') {
        const unanswered = [...storedAtKill].filter((id) => !acked.has(id));
        assert.ok(unanswered.length > 0, 'the held batch was committed without a 250');
      }

      const second = await spawnServer(batchEnv.env);
      children.push(second);
      const retry = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort(second), ignoreTLS: true, pool: true, maxConnections: 5 });
      await Promise.all(messages.map((m) => retry.sendMail({ raw: m.raw, envelope: { from: 'x@cust.example', to: [address] } })));
      retry.close();
      await second.kill('SIGTERM');

      const rows = await stored();
      assert.equal(rows.length, count, 'every message once');
      assert.equal(new Set(rows.map((r) => r.mail_message_id)).size, count);
      for (const r of rows) {
        const original = await buffer(await batchApp.storage.get(r.raw_storage_key!));
        assert.equal(original.length, r.raw_size, 'the original is whole');
        assert.equal(createHash('sha256').update(original).digest('hex'), r.raw_sha256);
      }
      const conversations = await batchApp.db
        .selectFrom('conversations')
        .select('id')
        .where('workspace_id', '=', seed.workspaceId)
        .where('id', 'not in', [...new Set(rows.map((r) => r.conversation_id))])
        .execute();
      assert.deepEqual(conversations, [], 'no conversation without its message');
    } finally {
      await batchApp?.close();
      await batchEnv.cleanup();
    }
  });
});
