// The inbox deletion job, killed with kill -9 part-way, resumes after a restart and finishes with
// counts that add up (every conversation and file deleted exactly once), leaving the workspace's
// other inbox untouched.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { assertDeletionCounts, conversationsLeft, deletionCrashScene, killMidDeletionAndResume, seedConversations, storedKeys } from '../helpers/lifecycle.js';

// How long the restarted server may take to finish: a bound for a loaded CI machine, not a timing.
const LIVENESS_MS = 120_000;

const CONVERSATIONS = 1500;
const KEPT = 20;

describe('inbox deletion survives kill -9', () => {
  const scene = deletionCrashScene();

  test('restarted after kill -9 the job finishes, the counts add up, the other inbox is untouched', async () => {
    const { te, children } = scene;
    const { first, app } = await scene.start();
    const ws = await seedWorkspace(app, { name: 'Inbox Crash' });
    const kept = await createInbox(app, { workspaceId: ws.workspaceId, name: 'Kept' });
    const keys = await seedConversations(app, te.dataDir, ws, CONVERSATIONS);
    const keptKeys = await seedConversations(app, te.dataDir, { workspaceId: ws.workspaceId, inboxId: kept.id }, KEPT);
    const left = (inboxId: string) => conversationsLeft(app, 'inbox_id', inboxId);

    const r = await fetch(`${first.url}/v1/inboxes/${ws.inboxId}`, { method: 'DELETE', headers: { authorization: `Bearer ${ws.ownerToken}` } });
    assert.equal(r.status, 202);
    const lines = await killMidDeletionAndResume({
      env: te.env,
      app,
      first,
      children,
      msg: 'inbox deletion',
      total: CONVERSATIONS,
      left: () => left(ws.inboxId),
      livenessMs: LIVENESS_MS,
    });
    assertDeletionCounts(lines, CONVERSATIONS, keys.length);
    assert.equal(await left(ws.inboxId), 0);
    assert.equal(await app.db.selectFrom('inboxes').select('id').where('id', '=', ws.inboxId).executeTakeFirst(), undefined, 'the inbox row is gone');
    const onDisk = storedKeys(te.dataDir);
    assert.equal(keys.filter((k) => onDisk.has(k)).length, 0, 'every file of the inbox is gone');
    assert.equal(await left(kept.id), KEPT, 'the other inbox keeps its conversations');
    assert.equal(keptKeys.filter((k) => onDisk.has(k)).length, keptKeys.length, 'and its files');
    const pending = await app.db.selectFrom('jobs').select('kind').where('kind', 'in', ['files.delete', 'inbox.delete']).execute();
    assert.deepEqual(pending, [], 'no work left behind');
  });
});
