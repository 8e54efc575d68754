// The workspace deletion job, killed with kill -9 part-way, resumes after a restart and finishes with
// counts that add up (every conversation and file deleted exactly once in the totals).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { buildServices, type App } from '../../src/context.js';
import { attachmentKey, rawEmailKey } from '../../src/conversations/files.js';
import { createLogger } from '../../src/platform/log.js';
import { newId } from '../../src/platform/ids.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { storedKeys, waitUntil } from '../helpers/lifecycle.js';
import { spawnServer, testEnv, type ChildServer, type TestEnv } from '../helpers/server.js';

const CONVERSATIONS = 1500;

/** Conversations with one message, one attachment and one raw .eml each, written straight into the tables. */
async function seedConversations(app: App, dataDir: string, ws: { workspaceId: string; inboxId: string }, n: number): Promise<string[]> {
  const now = new Date().toISOString();
  const contactId = newId('ct');
  await app.db.insertInto('contacts').values({ id: contactId, workspace_id: ws.workspaceId, name: 'Bulk', attributes: '{}', merged_into_id: null, created_at: now, updated_at: now }).execute();
  const keys: string[] = [];
  for (let start = 0; start < n; start += 250) {
    const rows = Array.from({ length: Math.min(250, n - start) }, () => ({ cv: newId('cv'), m: newId('m'), att: newId('att'), eml: newId('eml') }));
    await app.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('conversations')
        .values(rows.map((r) => ({ id: r.cv, workspace_id: ws.workspaceId, inbox_id: ws.inboxId, contact_id: contactId, channel_id: null, source: 'email' as const, status: 'open' as const, assignee_id: null, priority: null, subject: 'bulk', spam: 0, imported: 0, created_at: now, updated_at: now, last_message_at: now })))
        .execute();
      for (const r of rows) {
        await trx
          .insertInto('messages')
          .values({ id: r.m, workspace_id: ws.workspaceId, conversation_id: r.cv, kind: 'message', direction: 'in', author_type: 'contact', author_person_id: null, author_key_id: null, author_contact_id: contactId, body: 'hi', html: null, subject: 'bulk', automatic: 0, details: null, delivery_status: null, delivery_error: null, delivery_attempts: 0, sent_at: null, mail_message_id: null, mail_references: null, mail_reply_to: null, attachments_omitted: 0, raw_storage_key: rawEmailKey(ws.workspaceId, r.eml), raw_size: 5, raw_sha256: 'x', raw_stored_at: now, created_at: now })
          .execute();
        await trx
          .insertInto('attachments')
          .values({ id: r.att, workspace_id: ws.workspaceId, conversation_id: r.cv, message_id: r.m, filename: 'a.bin', content_type: 'application/octet-stream', size: 5, sha256: 'x', storage_key: attachmentKey(ws.workspaceId, r.att), content_id: null, inline: 0, created_at: now })
          .execute();
      }
    });
    for (const r of rows) keys.push(attachmentKey(ws.workspaceId, r.att), rawEmailKey(ws.workspaceId, r.eml));
  }
  for (const key of keys) {
    const file = path.join(dataDir, 'files', key);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'hello');
  }
  return keys;
}

/** Takes the database's write lock from outside the server (SQLite: BEGIN IMMEDIATE; Postgres: a table lock). */
async function holdWriteLock(env: Record<string, string>): Promise<{ release(): Promise<void> }> {
  if (env.SVC_DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.SVC_DATABASE_URL });
    await client.connect();
    await client.query('begin');
    await client.query('lock table conversations in exclusive mode');
    return {
      async release() {
        await client.query('rollback');
        await client.end();
      },
    };
  }
  const db = new SQLite(path.join(env.SVC_DATA_DIR, 'svc.db'));
  db.pragma('busy_timeout = 10000');
  db.prepare('begin immediate').run();
  return {
    async release() {
      db.prepare('rollback').run();
      db.close();
    },
  };
}

describe('workspace deletion survives kill -9', () => {
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

  test('restarted after kill -9 the job finishes and the counts add up', async () => {
    const first = await spawnServer(te.env);
    children.push(first);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const ws = await seedWorkspace(app, { name: 'Crash Test' });
    const keys = await seedConversations(app, te.dataDir, ws, CONVERSATIONS);
    const left = async () => Number((await app!.db.selectFrom('conversations').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow()).n);

    const r = await fetch(`${first.url}/v1/workspace`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ws.ownerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Crash Test' }),
    });
    assert.equal(r.status, 202);
    // Part-way: once the first batch committed, the test takes the database's write lock so the
    // server's next batch waits on it, and kills the server there.
    const started = Date.now();
    while ((await left()) === CONVERSATIONS) {
      if (Date.now() - started > 20_000) throw new Error('the deletion did not start');
      await new Promise((r) => setTimeout(r, 5));
    }
    const lock = await holdWriteLock(te.env);
    assert.equal(await first.kill('SIGKILL'), null);
    await lock.release();
    const afterKill = await left();
    assert.ok(afterKill > 0, `killed part-way (${afterKill} left)`);

    const second = await spawnServer(te.env);
    children.push(second);
    await waitUntil(() => second.stderrLines.some((l) => l.includes('"msg":"workspace deletion"') && l.includes('"done":true')), 30_000, 'the done line');
    // Files of a batch committed just before the kill go through their stored jobs.
    await waitUntil(async () => (await app!.db.selectFrom('jobs').select('id').where('kind', '=', 'files.delete').execute()).length === 0, 30_000, 'file jobs');
    await second.kill('SIGTERM');

    const lines = [...first.stderrLines, ...second.stderrLines].filter((l) => l.includes('"msg":"workspace deletion"')).map((l) => JSON.parse(l));
    for (const line of lines) assert.equal(line.conversations_deleted + line.conversations_left, CONVERSATIONS, 'deleted + left = all, in every line');
    const last = lines.at(-1);
    assert.equal(last.conversations_deleted, CONVERSATIONS);
    assert.equal(last.conversations_left, 0);
    assert.equal(last.files_deleted, keys.length, 'each file counted once');
    assert.equal(await left(), 0);
    const onDisk = storedKeys(te.dataDir);
    assert.equal(keys.filter((k) => onDisk.has(k)).length, 0, 'every file is gone');
    const pending = await app.db.selectFrom('jobs').select('kind').where('kind', 'in', ['files.delete', 'workspace.delete']).execute();
    assert.deepEqual(pending, [], 'no work left behind');
  });
});
