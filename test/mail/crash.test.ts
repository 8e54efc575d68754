// kill -9 of the server while mail arrives over SMTP: every message that got its 250 is stored,
// nothing is stored twice when the senders retry after the restart, and no message is half-written.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
});
