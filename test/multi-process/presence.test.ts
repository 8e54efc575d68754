// Which servers run on a database (presence records), and what a starting server may take back:
// a lease a killed process left is taken over at start only when no other server is live.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { lifecycleBackground } from '../../src/lifecycle/background.js';
import { WORKSPACE_DELETE_JOB } from '../../src/lifecycle/workspace-deletion.js';
import { iso, MINUTE } from '../../src/platform/clock.js';
import { enqueue } from '../../src/platform/jobs.js';
import { createLogger } from '../../src/platform/log.js';
import { aloneOnDatabase, presenceBackground, presenceKey, readPresences, serversRunningBesides } from '../../src/platform/presence.js';
import { applyMigrations } from '../../src/server/serve.js';
import { type TestEnv, testEnv } from '../helpers/server.js';

const quiet = () => createLogger({ level: 'error', write: () => {} });

describe('server presence', () => {
  let te: TestEnv;
  let first: App;
  let second: App;

  before(async () => {
    te = await testEnv();
    first = buildServices(loadConfig(te.env), { log: quiet() });
    second = buildServices(loadConfig(te.env), { log: quiet() });
    await applyMigrations(first, true);
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await te?.cleanup();
  });

  test('each server has its own record; records of dead or silent servers do not count', async () => {
    const one = await presenceBackground.start!(first);
    assert.equal(await aloneOnDatabase(first), true);
    const two = await presenceBackground.start!(second);
    assert.equal(await aloneOnDatabase(first), false, 'the second server is seen by the first');
    assert.deepEqual(
      (await serversRunningBesides(second)).map((p) => p.instance),
      [first.instanceId],
    );

    // A server on this host whose process ended, and one elsewhere not seen for two minutes.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const stale = new Date(Date.now() - 2 * MINUTE).toISOString();
    await first.db
      .insertInto('server_meta')
      .values([
        {
          key: presenceKey('srv_dead'),
          value: JSON.stringify({ pid: dead, host: os.hostname(), started_at: stale, seen_at: iso(new Date()), instance: 'srv_dead' }),
        },
        {
          key: presenceKey('srv_far'),
          value: JSON.stringify({ pid: process.pid, host: 'elsewhere.example', started_at: stale, seen_at: stale, instance: 'srv_far' }),
        },
      ])
      .execute();
    assert.deepEqual(
      (await serversRunningBesides(second)).map((p) => p.instance),
      [first.instanceId],
    );

    await one!.stop();
    assert.equal(await aloneOnDatabase(second), true, 'a stopped server removed its record');
    // A start removes the records of servers that are gone.
    await two!.stop();
    const again = await presenceBackground.start!(second);
    assert.deepEqual(
      (await readPresences(second.db)).map((r) => r.key),
      [presenceKey(second.instanceId)],
    );
    await again!.stop();
  });

  test('a deletion job under lease is taken back at start only when no other server runs', async () => {
    const held = iso(new Date(Date.now() + 5 * MINUTE));
    await enqueue(first.db, first.clock, { kind: WORKSPACE_DELETE_JOB, payload: { workspaceId: 'ws_x' }, uniqueKey: 'multi:ws_x' });
    await first.db.updateTable('jobs').set({ lease_until: held, run_at: held }).where('unique_key', '=', 'multi:ws_x').execute();
    const lease = async () =>
      (await first.db.selectFrom('jobs').select('lease_until').where('unique_key', '=', 'multi:ws_x').executeTakeFirstOrThrow()).lease_until;

    // The first server runs (and may hold that lease): the second one starting leaves it alone.
    const running = await presenceBackground.start!(first);
    await lifecycleBackground.start!(second);
    assert.equal(await lease(), held);
    const retention = await first.db.selectFrom('jobs').select('run_at').where('unique_key', '=', 'periodic:lifecycle.retention').executeTakeFirstOrThrow();
    assert.ok(Date.parse(retention.run_at) <= Date.now(), 'the retention run is due (once, under the job lease)');

    // Alone, a starting server knows the lease is a dead process's.
    await running!.stop();
    await lifecycleBackground.start!(second);
    assert.equal(await lease(), null);
  });
});
