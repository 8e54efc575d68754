// Retention with two `svc serve` processes starting at once on one Postgres database: their start
// runs do not overlap, and every expired conversation and file goes, each counted once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/context.js';
import { DAY, iso } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { seedConversations, storedKeys, waitUntil } from '../helpers/lifecycle.js';
import { quietApp, skipWithoutPostgres as skip, stopAll } from '../helpers/multi-process.js';
import { type ChildServer, runSvc, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

describe('retention with two servers starting at once', { skip }, () => {
  let te: TestEnv;
  let app: App;
  const servers: ChildServer[] = [];

  before(async () => {
    te = await testEnv();
    assert.equal((await runSvc(['migrate', 'up'], { env: te.env })).code, 0);
    app = quietApp(te.env);
  });
  after(() => stopAll(servers, app, te));

  test('the start runs do not overlap; every expired conversation and file goes, each counted once', async () => {
    const ws = await seedWorkspace(app);
    const conversations = 600; // 12 batches of the conversations rule
    const keys = await seedConversations(app, te.dataDir, ws, conversations);
    const old = iso(Date.now() - 40 * DAY);
    await app.db.updateTable('conversations').set({ status: 'closed', updated_at: old }).where('workspace_id', '=', ws.workspaceId).execute();
    await app.db.updateTable('workspaces').set({ retention_days: 30 }).where('id', '=', ws.workspaceId).execute();

    // Both start at once, and each start asks for a retention run (one run may answer both asks).
    servers.push(...(await Promise.all([spawnServer(te.env), spawnServer(te.env)])));
    const runs = () =>
      servers
        .flatMap((s) => s.stderrLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'retention'))
        .map((l: { time: string; duration_ms: number; deleted: Record<string, number> }) => ({
          end: Date.parse(l.time),
          start: Date.parse(l.time) - l.duration_ms,
          conversations: l.deleted.conversations,
        }))
        .sort((x, y) => x.start - y.start);
    const counted = () => runs().reduce((sum, r) => sum + r.conversations, 0);
    await waitUntil(() => counted() >= conversations, 60_000, 'the retention runs');
    await new Promise((r) => setTimeout(r, 1500)); // a second run still going would show here
    const done = runs();
    assert.ok(done.length >= 1 && done.length <= 2, `one run per start at most: ${JSON.stringify(done)}`);
    for (let i = 1; i < done.length; i++) assert.ok(done[i].start >= done[i - 1].end - 5, `runs overlap: ${JSON.stringify(done)}`);
    assert.equal(counted(), conversations, 'each conversation counted once');
    const left = await app.db.selectFrom('conversations').select('id').where('workspace_id', '=', ws.workspaceId).execute();
    assert.deepEqual(left, []);
    await waitUntil(
      () => {
        const onDisk = storedKeys(te.dataDir);
        return keys.every((k) => !onDisk.has(k));
      },
      60_000,
      'every file removed',
    );
    const errors = servers.flatMap((s) => s.stderrLines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error'));
    assert.deepEqual(errors, []);
  });
});
