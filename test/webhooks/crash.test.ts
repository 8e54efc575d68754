// kill -9 of the server in the middle of deliveries loses nothing: after a restart every event
// reaches the receiver (at least once, with the same webhook-id), and deliveries that were not
// under way when the server died are not sent twice.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { emitMessage } from '../helpers/events.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';

describe('webhook outbox survives kill -9', () => {
  let te: TestEnv;
  let rx: Receiver;
  let app: App | undefined;
  const children: ChildServer[] = [];

  before(async () => {
    te = await testEnv({ SVC_WEBHOOK_ALLOW_PRIVATE: '1' });
    rx = await startReceiver(() => 'hold');
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await rx.close();
    await te.cleanup();
  });

  test('no delivery is lost and only those under way are repeated', async () => {
    const first = await spawnServer(te.env);
    children.push(first);
    // The test writes events into the same database, as another part of the server would.
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(app);
    const created = await fetch(`${first.url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seed.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${rx.url}/crash`, events: ['message.created'] }),
    });
    assert.equal(created.status, 201);
    const { secret } = (await created.json()) as { secret: string };

    const events = [];
    for (let i = 0; i < 40; i++) events.push(await emitMessage(app, seed.workspaceId, seed.inboxId));
    const expected = new Set(events.map((e) => `msg_${e.id.slice(4)}`));

    // The receiver holds every request: deliveries are under way when the server is killed.
    await rx.waitFor(5);
    assert.equal(await first.kill('SIGKILL'), null);
    // Requests the dead process had written may still be read by the receiver after the exit is
    // noticed: once its connections are closed, every one of them has arrived.
    await waitUntil(async () => rx.openConnections() === 0, 20_000);
    const underWay = new Set(rx.received.map((r) => String(r.headers['webhook-id'])));
    const pending = await app.db.selectFrom('webhook_deliveries').select('status').execute();
    // The rest are still in the outbox (one row per event): their delivery rows are not made yet.
    const unsent = await app.db.selectFrom('webhook_outbox').select('endpoint_count').execute();
    assert.equal(pending.length + unsent.reduce((n, o) => n + Number(o.endpoint_count), 0), 40);
    assert.ok(
      pending.every((d) => d.status === 'pending'),
      'nothing was marked done by the dead process',
    );

    rx.handler = () => ({ status: 200, body: 'ok' });
    rx.releaseHeld(200);
    const heldCount = rx.received.length;
    const second = await spawnServer(te.env);
    children.push(second);

    await waitUntil(async () => {
      const rows = await app!.db.selectFrom('webhook_deliveries').select('status').where('status', '=', 'succeeded').execute();
      return rows.length === 40;
    }, 30_000);
    await second.kill('SIGTERM');

    const answered = rx.received.slice(heldCount);
    const ids = answered.map((r) => String(r.headers['webhook-id']));
    assert.deepEqual(new Set(ids), expected, 'every event arrived after the restart');
    for (const r of answered) verifyDelivery(r, secret, { now: () => new Date() });
    const counts = new Map<string, number>();
    for (const id of rx.received.map((r) => String(r.headers['webhook-id']))) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const [id, n] of counts) {
      assert.equal(n, underWay.has(id) ? 2 : 1, `${id} was sent ${n} times`);
    }
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
