// The progress a copy batch records (migration.progress) is counted once per copy step and carried
// forward by what each batch changed, instead of counting every item of the migration per batch
// (issue 19: that count grew with the mailbox). Checked against a fresh count after every batch,
// with a message gone from the old mailbox between the scan and the copy, and with a retry between
// two batches of one step.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type KyselyPlugin, type PluginTransformResultArgs, type RootOperationNode, SelectQueryNode, TableNode } from 'kysely';
import { parseMail } from '../../src/mail/parse.js';
import { copyStep } from '../../src/mailbox-migration/copy/copy.js';
import type { ReadOnlyMailbox } from '../../src/mailbox-migration/sources/imap.js';
import type { MailSource } from '../../src/mailbox-migration/sources/mail-source.js';
import { loadProgress } from '../../src/mailbox-migration/store.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { expectState, SUPPORT, startBulkStepScene, stopStepScene } from '../helpers/migration.js';
import type { TestServer } from '../helpers/server.js';

/** Counts the item counts (a grouped select of the migration's items, as loadProgress runs). */
function countingItemCounts(): KyselyPlugin & { count: number } {
  const plugin = {
    count: 0,
    transformQuery({ node }: { node: RootOperationNode }) {
      if (SelectQueryNode.is(node) && node.groupBy && node.from?.froms.some((f) => TableNode.is(f) && f.table.identifier.name === 'mailbox_migration_items'))
        plugin.count++;
      return node;
    },
    transformResult: async ({ result }: PluginTransformResultArgs) => result,
  };
  return plugin;
}

describe('the progress a copy batch records', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let mailbox: ReadOnlyMailbox;
  const now = new Date();
  const clock = new ManualClock(now);
  const THREADS = 12;

  before(async () => {
    ({ d, s, seed, id, mailbox } = await startBulkStepScene(clock, { threads: THREADS, perThread: 2, now, attachmentEvery: 4, attachmentBytes: 3000 }));
  });
  after(async () => {
    await stopStepScene({ s, mailbox }, d);
  });

  const migration = () => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const progressEvents = async () =>
    (await s.app.db.selectFrom('events').select('data').where('type', '=', 'migration.progress').orderBy('seq').execute()).map(
      (e) => JSON.parse(e.data).progress,
    );

  test('is counted once per step and equals a fresh count after every batch, a retry in between included', async () => {
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    // One message leaves the old mailbox after the scan: the copy finds it gone (skipped).
    d.doveadm(['expunge', '-u', SUPPORT, 'mailbox', 'INBOX', 'uid', '3']);
    assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);

    // Every batch's event is compared with a count made right after its transaction (the next
    // batch's FETCH is the moment: it runs after the previous batch was written).
    const counts = countingItemCounts();
    const ctx = { ...s.app, db: s.app.db.withPlugin(counts) };
    const afterBatches: unknown[] = [];
    let retried = false;
    const watching: MailSource = {
      get usable() {
        return mailbox.usable;
      },
      folders: () => mailbox.folders(),
      examine: (path) => mailbox.examine(path),
      uids: (from) => mailbox.uids(from),
      headers: (uids, fields) => mailbox.headers(uids, fields),
      async *sources(uids) {
        yield* mailbox.sources(uids);
      },
      logout: () => mailbox.logout(),
    };
    const limits = { batchThreads: 3, batchMessages: 200, batchBytes: 8 * 1024 * 1024 };
    let batches = 0;
    const parse = async (raw: Buffer) => parseMail(raw);
    const step = async () => {
      const before = (await progressEvents()).length;
      const outcome = await copyStep(ctx, await migration(), watching, { parse, limits }, 60_000);
      const events = (await progressEvents()).slice(before);
      batches += events.length;
      return { outcome, events };
    };

    // First step: a budget of 0 ms writes one batch (and reads the next ahead, then drops it).
    const first = await copyStep(ctx, await migration(), watching, { parse, limits }, 0);
    assert.equal(first, 'more');
    assert.equal(counts.count, 1, 'the step counts once');
    afterBatches.push(await loadProgress(s.app.db, id));
    assert.deepEqual((await progressEvents()).at(-1), afterBatches.at(-1));

    // A message that fails and is retried while the copy runs: made failed here, retried through the
    // API while the batch holding the rest of its thread is read (chosen, not yet written), after the
    // step's first batch was written. That batch must leave the thread planned and the step copy the
    // retried message, and its events must follow the retry.
    const failed = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['source_key', 'thread_key'])
      .where('migration_id', '=', id)
      .where('status', '=', 'planned')
      // A customer's first message: it names no other, so only the thread's conversation leads to it.
      .where('folder', '=', 'INBOX')
      .orderBy('source_key')
      .executeTakeFirstOrThrow();
    const sibling = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select(['folder', 'uid'])
      .where('migration_id', '=', id)
      .where('thread_key', '=', failed.thread_key)
      .where('source_key', '!=', failed.source_key)
      .executeTakeFirstOrThrow();
    await s.app.db
      .updateTable('mailbox_migration_items')
      .set({ status: 'failed', error: 'test' })
      .where('migration_id', '=', id)
      .where('source_key', '=', failed.source_key)
      .execute();
    clock.advance(1000);
    const eventsBeforeStep = (await progressEvents()).length;
    let examined = '';
    let retriedAfterFirstBatch = false;
    watching.examine = (path) => {
      examined = path;
      return mailbox.examine(path);
    };
    watching.sources = async function* (uids) {
      if (!retried && examined === sibling.folder && uids.includes(Number(sibling.uid))) {
        retried = true;
        retriedAfterFirstBatch = (await progressEvents()).length > eventsBeforeStep;
        clock.advance(1000);
        assert.equal((await s.request('POST', `/v1/migrations/${id}/retry`, { token: seed.apiKey })).status, 202);
      }
      yield* mailbox.sources(uids);
    };
    counts.count = 0;
    const second = await step();
    assert.equal(second.outcome, 'done');
    assert.ok(retried && retriedAfterFirstBatch, 'the retry came while a later batch was read');
    // Once for the step, once more after the retry: not once per batch.
    assert.ok(second.events.length >= 3, `${second.events.length} batches`);
    assert.equal(counts.count, 2, `${counts.count} counts of the migration's items for ${second.events.length} batches`);
    const final = await loadProgress(s.app.db, id);
    assert.deepEqual(second.events.at(-1), final);
    assert.equal(final.copied, THREADS * 2 - 1);
    assert.equal(final.skipped, 1);
    assert.equal(final.planned, 0);
    assert.equal(final.failed, 0);
    assert.equal(final.conversations, THREADS);
    assert.equal(final.percent, 100);
    // The retried message joined the conversation the rest of its thread went into.
    const conversationsOfThread = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select('conversation_id')
      .distinct()
      .where('migration_id', '=', id)
      .where('thread_key', '=', failed.thread_key)
      .execute();
    assert.equal(conversationsOfThread.length, 1, JSON.stringify(conversationsOfThread));
    assert.ok(conversationsOfThread[0]!.conversation_id);
    assert.ok(batches >= 3);
  });
});
