// Data for lifecycle tests: mail with an attachment (so a conversation has stored files), the files
// in local storage, the storage keys the database refers to, bulk conversations written straight
// into the tables, the database's write lock taken from outside, and the kill -9 step of the deletion crash tests.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { attachmentKey, rawEmailKey } from '../../src/conversations/files.js';
import type { Db } from '../../src/db/schema.js';
import { newId, randomText } from '../../src/platform/ids.js';
import { createLogger } from '../../src/platform/log.js';
import { INGRESS_SECRET } from './mail.js';
import { type ChildServer, spawnServer, type TestEnv, testEnv } from './server.js';

/** A raw multipart message with a text part and one attachment. */
export function mailWithFile(to: string, opts: { from?: string; subject?: string; inReplyTo?: string; file?: string } = {}): Buffer {
  const boundary = `b-${randomText(10)}`;
  const lines = [
    `From: ${opts.from ?? `customer-${randomText(6)}@example.com`}`,
    `To: ${to}`,
    `Subject: ${opts.subject ?? 'Help'}`,
    `Message-ID: <${randomText(12)}@example.com>`,
    ...(opts.inReplyTo ? [`In-Reply-To: <${opts.inReplyTo}>`] : []),
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello, see the file.',
    `--${boundary}`,
    `Content-Type: application/octet-stream; name="${opts.file ?? 'report.bin'}"`,
    `Content-Disposition: attachment; filename="${opts.file ?? 'report.bin'}"`,
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(`file ${randomText(20)}`).toString('base64'),
    `--${boundary}--`,
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** Delivers a mail with an attachment through POST /v1/ingress/email. */
/** Anything that sends requests to a server: a TestServer, or a small client of a spawned one. */
export interface Requester {
  request(method: string, urlPath: string, opts: { raw?: Buffer; token?: string }): Promise<{ status: number; body: any }>;
}

export async function deliverWithFile(s: Requester, to: string, opts: Parameters<typeof mailWithFile>[1] = {}) {
  const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(to)}`, { raw: mailWithFile(to, opts), token: INGRESS_SECRET });
  if (r.status !== 201) throw new Error(`ingress answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.data[0] as { inbox_id: string; conversation_id: string; message_id: string };
}

/** Every stored file (storage key) under the local storage of a data dir. */
export function storedKeys(dataDir: string): Set<string> {
  const root = path.join(dataDir, 'files');
  const out = new Set<string>();
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.tmp') continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else out.add(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out;
}

/** Storage keys the database refers to (attachments and raw .eml), optionally of one workspace. */
export async function referencedKeys(db: Db, workspaceId?: string): Promise<string[]> {
  let att = db.selectFrom('attachments').select('storage_key as key');
  let raw = db.selectFrom('messages').select('raw_storage_key as key').where('raw_storage_key', 'is not', null);
  if (workspaceId) {
    att = att.where('workspace_id', '=', workspaceId);
    raw = raw.where('workspace_id', '=', workspaceId);
  }
  const rows = [...(await att.execute()), ...(await raw.execute())];
  return rows.map((r) => r.key!);
}

/** Polls `check` until it gives a truthy value, and returns that value. */
export async function waitUntil<T>(
  check: () => Promise<T | false | undefined | null> | T | false | undefined | null,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Conversations with one message, one attachment and one raw .eml each, written straight into the tables. */
export async function seedConversations(app: App, dataDir: string, ws: { workspaceId: string; inboxId: string }, n: number): Promise<string[]> {
  const now = new Date().toISOString();
  const contactId = newId('ct');
  await app.db
    .insertInto('contacts')
    .values({ id: contactId, workspace_id: ws.workspaceId, name: 'Bulk', attributes: '{}', merged_into_id: null, created_at: now, updated_at: now })
    .execute();
  const keys: string[] = [];
  for (let start = 0; start < n; start += 250) {
    const rows = Array.from({ length: Math.min(250, n - start) }, () => ({ cv: newId('cv'), m: newId('m'), att: newId('att'), eml: newId('eml') }));
    await app.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('conversations')
        .values(
          rows.map((r) => ({
            id: r.cv,
            workspace_id: ws.workspaceId,
            inbox_id: ws.inboxId,
            contact_id: contactId,
            channel_id: null,
            source: 'email' as const,
            status: 'open' as const,
            assignee_id: null,
            priority: null,
            subject: 'bulk',
            spam: 0,
            imported: 0,
            created_at: now,
            updated_at: now,
            last_message_at: now,
          })),
        )
        .execute();
      for (const r of rows) {
        await trx
          .insertInto('messages')
          .values({
            id: r.m,
            workspace_id: ws.workspaceId,
            conversation_id: r.cv,
            kind: 'message',
            direction: 'in',
            author_type: 'contact',
            author_person_id: null,
            author_key_id: null,
            author_contact_id: contactId,
            body: 'hi',
            html: null,
            subject: 'bulk',
            automatic: 0,
            details: null,
            delivery_status: null,
            delivery_error: null,
            delivery_attempts: 0,
            sent_at: null,
            mail_message_id: null,
            mail_references: null,
            mail_reply_to: null,
            attachments_omitted: 0,
            raw_storage_key: rawEmailKey(ws.workspaceId, r.eml),
            raw_size: 5,
            raw_sha256: 'x',
            raw_stored_at: now,
            created_at: now,
          })
          .execute();
        await trx
          .insertInto('attachments')
          .values({
            id: r.att,
            workspace_id: ws.workspaceId,
            conversation_id: r.cv,
            message_id: r.m,
            filename: 'a.bin',
            content_type: 'application/octet-stream',
            size: 5,
            sha256: 'x',
            storage_key: attachmentKey(ws.workspaceId, r.att),
            content_id: null,
            inline: 0,
            created_at: now,
          })
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
export async function holdWriteLock(env: Record<string, string>): Promise<{ release(): Promise<void> }> {
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

/**
 * The middle of a deletion crash test: the deletion was asked of `first`; once its first batch
 * committed (`left()` below `total`), the test takes the write lock so the next batch waits on it,
 * kills `first` with -9 there, starts a second server that resumes the job, waits for its done line
 * (`msg`) and for the file jobs, and stops it. Returns the `msg` lines of both servers, parsed.
 */
export async function killMidDeletionAndResume(opts: {
  env: Record<string, string>;
  app: App;
  first: ChildServer;
  /** Every server started, so that the test's `after` kills what is left. */
  children: ChildServer[];
  msg: string;
  total: number;
  left: () => Promise<number>;
  /** How long the restarted server may take to finish: a bound for a loaded CI machine, not a timing. */
  livenessMs: number;
}): Promise<any[]> {
  const { env, app, first, children, msg, total, left, livenessMs } = opts;
  const started = Date.now();
  while ((await left()) === total) {
    if (Date.now() - started > 20_000) throw new Error('the deletion did not start');
    await new Promise((r) => setTimeout(r, 5));
  }
  const lock = await holdWriteLock(env);
  assert.equal(await first.kill('SIGKILL'), null);
  await lock.release();
  const afterKill = await left();
  assert.ok(afterKill > 0, `killed part-way (${afterKill} left)`);

  const second = await spawnServer(env);
  children.push(second);
  await waitUntil(() => second.stderrLines.some((l) => l.includes(`"msg":"${msg}"`) && l.includes('"done":true')), livenessMs, 'the done line');
  // Files of a batch committed just before the kill go through their stored jobs.
  await waitUntil(
    async () => (await app.db.selectFrom('jobs').select('id').where('kind', '=', 'files.delete').execute()).length === 0,
    livenessMs,
    'file jobs',
  );
  await second.kill('SIGTERM');
  return [...first.stderrLines, ...second.stderrLines].filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l));
}

/**
 * The frame of a deletion crash test, called inside its `describe`: a test environment, every server
 * spawned (killed in `after` if still running), and `start()`: the first server and an App on the same
 * database for the test's own reads.
 */
export function deletionCrashScene() {
  const scene = {
    te: undefined as unknown as TestEnv,
    app: undefined as App | undefined,
    children: [] as ChildServer[],
    async start(): Promise<{ first: ChildServer; app: App }> {
      const first = await spawnServer(scene.te.env);
      scene.children.push(first);
      scene.app = buildServices(loadConfig(scene.te.env), { log: createLogger({ level: 'error', write: () => {} }) });
      return { first, app: scene.app };
    },
  };
  before(async () => {
    scene.te = await testEnv();
  });
  after(async () => {
    for (const c of scene.children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await scene.app?.close();
    await scene.te.cleanup();
  });
  return scene;
}

/** How many conversations are left where `column` is `value`. */
export async function conversationsLeft(app: App, column: 'workspace_id' | 'inbox_id', value: string): Promise<number> {
  return Number(
    (
      await app.db
        .selectFrom('conversations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(column, '=', value)
        .executeTakeFirstOrThrow()
    ).n,
  );
}

/** A deletion's log lines: deleted and left add up to `total` in every one; the last deleted all, each file counted once. */
export function assertDeletionCounts(lines: any[], total: number, files: number): void {
  for (const line of lines) assert.equal(line.conversations_deleted + line.conversations_left, total, 'deleted + left = all, in every line');
  const last = lines.at(-1);
  assert.equal(last.conversations_deleted, total);
  assert.equal(last.conversations_left, 0);
  assert.equal(last.files_deleted, files, 'each file counted once');
}
