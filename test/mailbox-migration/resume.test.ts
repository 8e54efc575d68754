// A copy stops and continues at the right place: pause and resume, a password revoked mid-copy
// (needs_attention until a new one is given), a provider's connection limit (continues by itself),
// and kill -9 of the server mid-copy. Nothing is ever copied twice.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import type { MigrationPart } from '../../src/mailbox-migration/background.js';
import { PROVIDER_LIMIT_PAUSE_MS } from '../../src/mailbox-migration/copy/worker.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedEmailChannel } from '../helpers/mail.js';
import { callerWith, connectedImapMigration, expectState, fillBulkMailbox, SUPPORT, SUPPORT_PASSWORD } from '../helpers/migration.js';
import { type ChildServer, spawnServer, startTestServer, type TestEnv, type TestServer, testEnv } from '../helpers/server.js';

async function countCopies(app: Pick<App, 'db'>, workspaceId: string) {
  const messages = await app.db
    .selectFrom('messages')
    .select(['mail_message_id'])
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'message')
    .execute();
  const ids = messages.map((m) => m.mail_message_id);
  return { messages: messages.length, distinct: new Set(ids).size };
}

describe('pause, resume, a revoked password and a provider limit', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let worker: MigrationPart['worker'];
  const now = new Date();
  const clock = new ManualClock(now);
  const THREADS = 12;

  before(async () => {
    d = await startDovecot({ maxUserIpConnections: 1 });
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    await fillBulkMailbox(d, SUPPORT, { threads: THREADS, perThread: 2, now });
    s = await startTestServer({ clock, env: { SVC_MIGRATION_ALLOW_PRIVATE: '1' } });
    await s.app.jobs.stop();
    worker = (s.server.parts['mailbox-migration'] as MigrationPart).worker;
    seed = await seedWorkspace(s.app);
    await seedEmailChannel(s.app, seed, { address: SUPPORT });
    id = await connectedImapMigration(s, seed.apiKey, seed.inboxId, d);
    await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey });
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    // One batch of two threads per run, so the test can stop between batches.
    Object.assign(worker.limits, { budgetMs: 0, batchThreads: 2 });
  });
  after(async () => {
    await s?.stop();
    await d?.stop();
  });

  const post = (action: string, body?: unknown) => s.request('POST', `/v1/migrations/${id}/${action}`, { token: seed.apiKey, body });
  const copiedSubjects = async () =>
    (await s.app.db.selectFrom('conversations').select('subject').where('workspace_id', '=', seed.workspaceId).execute()).map((c) => c.subject).sort();

  test('newest conversations first; pause stops after the batch, resume continues', async () => {
    assert.equal((await post('start')).status, 202);
    await s.app.jobs.drain(1);
    assert.deepEqual(await copiedSubjects(), [`Question ${THREADS - 2}`, `Question ${THREADS - 1}`], 'the two newest threads came first');
    assert.equal((await post('pause')).body.state, 'paused');
    await s.app.jobs.drain();
    assert.equal((await copiedSubjects()).length, 2, 'nothing is copied while paused');
    assert.equal(
      await s.app.db.selectFrom('jobs').select('id').where('unique_key', '=', `migration:${id}`).executeTakeFirst(),
      undefined,
      'the worker stopped',
    );
    const paused = await expectState(s, seed.apiKey, id, 'paused');
    assert.deepEqual(paused.allowed_actions, ['update', 'credentials', 'test', 'folders', 'preview', 'resume', 'cancel', 'retry', 'keep_reading']);
    assert.equal((await post('resume')).body.state, 'copying');
    await s.app.jobs.drain(1);
    assert.equal((await copiedSubjects()).length, 4);
  });

  test('a password revoked mid-copy: needs_attention, then a new password continues where it stopped', async () => {
    await d.setPassword(SUPPORT, 'new-app-password');
    d.kick(SUPPORT);
    await s.app.jobs.drain(1);
    const m = await expectState(s, seed.apiKey, id, 'needs_attention');
    assert.equal(m.attention.reason, 'login_failed');
    assert.ok(m.allowed_actions.includes('credentials') && m.allowed_actions.includes('resume'));
    const errors = await s.request('GET', `/v1/migrations/${id}/errors`, { token: seed.apiKey });
    assert.equal(errors.body.attention.reason, 'login_failed');
    assert.equal((await copiedSubjects()).length, 4);
    await s.app.jobs.drain();
    assert.equal((await copiedSubjects()).length, 4, 'it waits for a new password');

    const fixed = await s.request('PUT', `/v1/migrations/${id}/credentials`, { token: seed.apiKey, body: { password: 'new-app-password' } });
    assert.equal(fixed.body.state, 'copying');
    await s.app.jobs.drain(1);
    assert.equal((await copiedSubjects()).length, 6);
  });

  test('a provider limit: needs_attention, then it continues by itself', async () => {
    // Dovecot here allows one connection per user and address: another client holds it.
    const { connectReadOnly } = await import('../../src/mailbox-migration/sources/imap.js');
    await worker.closeConnection(id);
    const hog = await connectReadOnly({ address: d.host, port: d.port, tls: 'none', user: SUPPORT, password: 'new-app-password' });
    await s.app.jobs.drain(1);
    const m = await expectState(s, seed.apiKey, id, 'needs_attention');
    assert.equal(m.attention.reason, 'provider_limit');
    assert.ok(m.attention.retry_at);
    await hog.logout();
    await s.app.jobs.drain();
    assert.equal((await copiedSubjects()).length, 6, 'it waits for the limit to pass');
    clock.advance(PROVIDER_LIMIT_PAUSE_MS + 1000);
    await s.app.jobs.drain();
    const done = await expectState(s, seed.apiKey, id, 'syncing');
    assert.equal(done.progress.copied, THREADS * 2);
    const counts = await countCopies(s.app, seed.workspaceId);
    assert.equal(counts.messages, THREADS * 2);
    assert.equal(counts.distinct, THREADS * 2, 'no message was copied twice');
    const activity = (await s.request('GET', `/v1/migrations/${id}/activity?limit=200`, { token: seed.apiKey })).body.data
      .map((e: { action: string }) => e.action)
      .reverse();
    for (const action of ['copy_started', 'paused', 'resumed', 'needs_attention', 'credentials_replaced', 'copy_finished'])
      assert.ok(activity.includes(action), action);
  });
});

describe('kill -9 of the server mid-copy', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let te: TestEnv;
  let app: App | undefined;
  const children: ChildServer[] = [];

  before(async () => {
    d = await startDovecot();
    d.addUser(SUPPORT, SUPPORT_PASSWORD);
    te = await testEnv({ SVC_MIGRATION_ALLOW_PRIVATE: '1' });
  });
  after(async () => {
    for (const c of children) if (c.child.exitCode === null) await c.kill('SIGKILL');
    await app?.close();
    await te?.cleanup();
    await d?.stop();
  });

  test('the copy resumes after a restart without duplicates', async () => {
    const THREADS = 600;
    const total = (await fillBulkMailbox(d, SUPPORT, { threads: THREADS, perThread: 3, now: new Date(), attachmentEvery: 10, attachmentBytes: 20_000 }))
      .messages;
    const first = await spawnServer(te.env);
    children.push(first);
    app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(app);
    await seedEmailChannel(app, seed, { address: SUPPORT });
    const call = callerWith(seed.apiKey);
    const created = await call(first.url, 'POST', '/v1/migrations', {
      provider: 'imap',
      source_address: SUPPORT,
      imap: { host: '127.0.0.1', port: d.port, tls: 'none' },
      inbox_id: seed.inboxId,
    });
    const id = created.body.id;
    await call(first.url, 'PUT', `/v1/migrations/${id}/credentials`, { password: SUPPORT_PASSWORD });
    assert.equal((await call(first.url, 'POST', `/v1/migrations/${id}/test`)).body.ok, true);
    await call(first.url, 'POST', `/v1/migrations/${id}/scan`);
    await waitUntil(async () => (await call(first.url, 'GET', `/v1/migrations/${id}`)).body.state === 'ready', 60_000);
    await call(first.url, 'POST', `/v1/migrations/${id}/start`);
    const copied = async () => {
      const row = await app!.db
        .selectFrom('mailbox_migration_items')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('migration_id', '=', id)
        .where('status', '=', 'copied')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    await waitUntil(async () => (await copied()) > 0, 60_000, 5);
    assert.equal(await first.kill('SIGKILL'), null);
    const atKill = await copied();
    assert.ok(atKill > 0 && atKill < total, `killed in the middle (${atKill} of ${total})`);

    const second = await spawnServer(te.env);
    children.push(second);
    await waitUntil(async () => (await call(second.url, 'GET', `/v1/migrations/${id}`)).body.state === 'syncing', 120_000);
    const m = (await call(second.url, 'GET', `/v1/migrations/${id}`)).body;
    assert.equal(m.progress.copied, total);
    assert.equal(m.progress.failed, 0);
    const counts = await countCopies(app, seed.workspaceId);
    assert.equal(counts.messages, total, 'every message once');
    assert.equal(counts.distinct, total);
    const conversations = await app.db.selectFrom('conversations').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(conversations.length, THREADS);
    await second.kill('SIGTERM');
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
