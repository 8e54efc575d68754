// The workspace deletion job, killed with kill -9 part-way, resumes after a restart and finishes with
// counts that add up (every conversation and file deleted exactly once in the totals).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedWorkspace } from '../helpers/fixtures.js';
import { assertDeletionCounts, conversationsLeft, deletionCrashScene, killMidDeletionAndResume, seedConversations, storedKeys } from '../helpers/lifecycle.js';

// How long the restarted server may take to finish: a bound for a loaded CI machine, not a timing.
const LIVENESS_MS = 120_000;

const CONVERSATIONS = 1500;

describe('workspace deletion survives kill -9', () => {
  const scene = deletionCrashScene();

  test('restarted after kill -9 the job finishes and the counts add up', async () => {
    const { te, children } = scene;
    const { first, app } = await scene.start();
    const ws = await seedWorkspace(app, { name: 'Crash Test' });
    const keys = await seedConversations(app, te.dataDir, ws, CONVERSATIONS);
    const left = () => conversationsLeft(app, 'workspace_id', ws.workspaceId);

    const r = await fetch(`${first.url}/v1/workspace`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ws.ownerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Crash Test' }),
    });
    assert.equal(r.status, 202);
    const lines = await killMidDeletionAndResume({
      env: te.env,
      app,
      first,
      children,
      msg: 'workspace deletion',
      total: CONVERSATIONS,
      left: left,
      livenessMs: LIVENESS_MS,
    });
    assertDeletionCounts(lines, CONVERSATIONS, keys.length);
    assert.equal(await left(), 0);
    const onDisk = storedKeys(te.dataDir);
    assert.equal(keys.filter((k) => onDisk.has(k)).length, 0, 'every file is gone');
    const pending = await app.db.selectFrom('jobs').select('kind').where('kind', 'in', ['files.delete', 'workspace.delete']).execute();
    assert.deepEqual(pending, [], 'no work left behind');
  });
});
