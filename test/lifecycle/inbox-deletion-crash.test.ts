// The inbox deletion job, killed with kill -9 part-way, resumes after a restart and finishes with
// counts that add up (every conversation and file deleted exactly once), leaving the workspace's
// other inbox untouched.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createInbox } from '../../src/inboxes/service.js';
import { createLogger } from '../../src/platform/log.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { killMidDeletionAndResume, seedConversations, storedKeys } from '../helpers/lifecycle.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from '../helpers/server.js';

// How long the restarted server may take to finish: a bound for a loaded CI machine, not a timing.
const LIVENESS_MS = 120_000;

const CONVERSATIONS = 1500;
const KEPT = 20;

describe('inbox deletion survives kill -9', () => {
  let te: TestEnv;
  let app: App | undefined;
  const children: ChildServer[] = [];

  before(async () => {
    te = await testEnv();
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await te.cleanup();
  });

  test('restarted after kill -9 the job finishes, the counts add up, the other inbox is untouched', async () => {
    const first = await spawnServer(te.env);
    children.push(first);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const ws = await seedWorkspace(app, { name: 'Inbox Crash' });
    const kept = await createInbox(app, { workspaceId: ws.workspaceId, name: 'Kept' });
    const keys = await seedConversations(app, te.dataDir, ws, CONVERSATIONS);
    const keptKeys = await seedConversations(app, te.dataDir, { workspaceId: ws.workspaceId, inboxId: kept.id }, KEPT);
    const left = async (inboxId: string) =>
      Number(
        (
          await app!.db
            .selectFrom('conversations')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('inbox_id', '=', inboxId)
            .executeTakeFirstOrThrow()
        ).n,
      );

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
    for (const line of lines) assert.equal(line.conversations_deleted + line.conversations_left, CONVERSATIONS, 'deleted + left = all, in every line');
    const last = lines.at(-1);
    assert.equal(last.conversations_deleted, CONVERSATIONS);
    assert.equal(last.conversations_left, 0);
    assert.equal(last.files_deleted, keys.length, 'each file counted once');
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
