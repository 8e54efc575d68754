// Postgres LISTEN/NOTIFY between server processes: another writer's commit wakes this process's
// stream watch at once (its own timed poll is set far out here, so nothing else could), its own
// commits do not wake it twice, relayed hub signals arrive once, and a dropped listening connection
// comes back and catches up.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { type App, applicationName, buildServices } from '../../src/context.js';
import { recordEvent } from '../../src/events/service.js';
import { watchStreamPosition } from '../../src/events/watch.js';
import type { RunningPart } from '../../src/platform/background.js';
import { createLogger } from '../../src/platform/log.js';
import { applyMigrations } from '../../src/server/serve.js';
import { postgresUrl } from '../helpers/db.js';
import { type TestEnv, testEnv } from '../helpers/server.js';

const skip = postgresUrl ? false : 'LISTEN/NOTIFY is Postgres only (SVC_TEST_DATABASE_URL); on SQLite the stream position is polled every 250 ms';
const FAR = 10 * 60_000;

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('wake-ups between server processes (Postgres)', { skip }, () => {
  let te: TestEnv;
  let writer: App;
  let watcher: App;
  const parts: RunningPart[] = [];
  let wakes = 0;
  const warnings: string[] = [];
  const signals: { writer: unknown[]; watcher: unknown[] } = { writer: [], watcher: [] };

  const write = (app: App) => recordEvent(app, { workspaceId: 'ws_notify', type: 'conversation.updated', occurredAt: new Date(), data: {}, webhook: false });

  before(async () => {
    te = await testEnv();
    const log = createLogger({ level: 'error', write: () => {} });
    writer = buildServices(loadConfig(te.env), { log });
    watcher = buildServices(loadConfig(te.env), { log: createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line).msg) }) });
    await applyMigrations(writer, true);
    watcher.hub.on('events', () => wakes++);
    writer.hub.on('test-signal', (p) => signals.writer.push(p));
    watcher.hub.on('test-signal', (p) => signals.watcher.push(p));
    for (const app of [writer, watcher]) parts.push(await watchStreamPosition(app, { pollMs: FAR, notifiedPollMs: FAR, relayedSignals: ['test-signal'] }));
  });
  after(async () => {
    for (const p of parts) await p.stop();
    await writer?.close();
    await watcher?.close();
    await te?.cleanup();
  });

  test('another writer’s commit wakes the watch at once; its own commits do not', async () => {
    const before = wakes;
    await write(writer);
    // Nothing but the notification can wake it: its timed polls are ten minutes out.
    await waitUntil(() => wakes > before, 20_000, 'the wake-up');

    await new Promise((r) => setTimeout(r, 200));
    const settled = wakes;
    await write(watcher);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(wakes, settled, 'the watcher announces its own commits itself (announceEvents), not again');
  });

  test('relayed hub signals reach the other process once and are not sent back', async () => {
    writer.hub.emit('test-signal', { sessionIds: ['ses_1'] });
    await waitUntil(() => signals.watcher.length === 1, 20_000, 'the relayed signal');
    assert.deepEqual(signals.watcher, [{ sessionIds: ['ses_1'] }]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(signals.writer.length, 1, 'only the writer’s own emit');
    assert.equal(signals.watcher.length, 1);
  });

  test('a dropped listening connection comes back and catches up with commits made meanwhile', async () => {
    const mine = applicationName(watcher.instanceId);
    const terminated = await sql<{ ok: boolean }>`select pg_terminate_backend(pid) as ok from pg_stat_activity
      where application_name = ${mine} and query ilike 'listen%'`.execute(writer.db);
    assert.equal(terminated.rows.length, 1, 'one listening connection');
    // Written while the watcher knows it is not listening (it reconnects after a pause).
    await waitUntil(() => warnings.includes('event notifications unavailable; polling meanwhile'), 20_000, 'the drop to be noticed');
    const before = wakes;
    await write(writer);
    await waitUntil(() => wakes > before, 20_000, 'the wake-up after reconnecting');
  });
});
