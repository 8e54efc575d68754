// The scan and the copy overlap reading the old mailbox with parsing and writing (issue 19): a
// message is handed to the parser while the FETCH still streams, instead of after the whole range
// arrived. Checked on a real Dovecot through a MailSource that records when each FETCH ended, with
// the result compared to what the mailbox holds (every message planned once, copied once).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  InsertQueryNode,
  type KyselyPlugin,
  type PluginTransformResultArgs,
  type RootOperationNode,
  SelectQueryNode,
  TableNode,
  UpdateQueryNode,
} from 'kysely';
import { parseHeaderBlock, parseMail } from '../../src/mail/parse.js';
import { copyStep, threadItemsQuery } from '../../src/mailbox-migration/copy/copy.js';
import { scanParserOf, scanStep } from '../../src/mailbox-migration/copy/scan.js';
import type { ReadOnlyMailbox } from '../../src/mailbox-migration/sources/imap.js';
import type { MailSource } from '../../src/mailbox-migration/sources/mail-source.js';
import { itemCountsQuery } from '../../src/mailbox-migration/store.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Dovecot, dovecotMissing } from '../helpers/dovecot.js';
import type { Seed } from '../helpers/fixtures.js';
import { referencedKeys, storedKeys } from '../helpers/lifecycle.js';
import { expectState, startBulkStepScene, stopStepScene } from '../helpers/migration.js';
import type { TestServer } from '../helpers/server.js';

/** 'parsed', 'fetch_ended', and for a scan's ranges `fetch_started <range>` and `fetch_ended <range>`. */
type Event = string;

/** A plugin that counts the statements `matches` picks (query builder, or raw SQL as a RawNode). */
function counting(matches: (node: RootOperationNode) => boolean): KyselyPlugin & { count: number } {
  const plugin = {
    count: 0,
    transformQuery({ node }: { node: RootOperationNode }) {
      if (matches(node)) plugin.count++;
      return node;
    },
    transformResult: async ({ result }: PluginTransformResultArgs) => result,
  };
  return plugin;
}

/** Counts the statements that change the migration's items or threads (query builder or raw SQL). */
const countingItemUpdates = () =>
  counting((node) => {
    if (UpdateQueryNode.is(node)) {
      const table = node.table && TableNode.is(node.table) ? node.table.table.identifier.name : '';
      return table === 'mailbox_migration_items' || table === 'mailbox_migration_threads';
    }
    return node.kind === 'RawNode' && /^\s*update mailbox_migration_(items|threads)\b/i.test(node.sqlFragments.join('?'));
  });

/** Counts the reads of a table (query builder). */
const countingReadsOf = (table: string) =>
  counting((node) => SelectQueryNode.is(node) && !!node.from?.froms.some((f) => TableNode.is(f) && f.table.identifier.name === table));

/** Counts the inserts into a table (query builder). */
const countingInsertsInto = (table: string) => counting((node) => InsertQueryNode.is(node) && node.into?.table.identifier.name === table);

/** The real mailbox, with a note of every FETCH's end and every parse, in the order they happened. */
function recording(mailbox: ReadOnlyMailbox, events: Event[]): MailSource {
  return {
    get usable() {
      return mailbox.usable;
    },
    folders: () => mailbox.folders(),
    examine: (path) => mailbox.examine(path),
    uids: (from) => mailbox.uids(from),
    async *headers(uids, fields) {
      events.push(`fetch_started ${uids}`);
      yield* mailbox.headers(uids, fields);
      events.push('fetch_ended', `fetch_ended ${uids}`);
    },
    async *sources(uids) {
      yield* mailbox.sources(uids);
      events.push('fetch_ended');
    },
    logout: () => mailbox.logout(),
  };
}

describe('scan and copy overlap the FETCH with parsing', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let id: string;
  let mailbox: ReadOnlyMailbox;
  const now = new Date();
  const clock = new ManualClock(now);
  const THREADS = 30;

  before(async () => {
    ({ d, s, seed, id, mailbox } = await startBulkStepScene(clock, { threads: THREADS, perThread: 2, now, attachmentEvery: 5, attachmentBytes: 4000 }));
  });
  after(async () => {
    await stopStepScene({ s, mailbox }, d);
  });

  const migration = () => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('the scan parses header blocks while their FETCH streams, asks for the next range before one ends, and plans every message once', async () => {
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    const events: Event[] = [];
    const parse = (headers: Buffer) => {
      events.push('parsed');
      return parseHeaderBlock(headers);
    };
    // Ranges of 10 UIDs: three per folder.
    assert.equal(await scanStep(s.app, await migration(), recording(mailbox, events), 60_000, scanParserOf(parse), 10), 'done');
    // INBOX and Sent: six FETCH ranges, and parsing began before the first of them ended.
    assert.equal(events.filter((e) => e === 'fetch_ended').length, 6);
    assert.equal(events.filter((e) => e === 'parsed').length, THREADS * 2);
    assert.ok(events.indexOf('parsed') < events.indexOf('fetch_ended'), `parsing waited for the whole FETCH: ${events.join(' ')}`);
    // Each folder's next range was asked for while the one before it still streamed (the old loop
    // asked only after a range ended and its rows were handed to the write).
    for (const [range, before] of [
      ['11:20', '1:10'],
      ['21:30', '11:20'],
    ]) {
      const started = events.map((e, i) => (e === `fetch_started ${range}` ? i : -1)).filter((i) => i >= 0);
      const ended = events.map((e, i) => (e === `fetch_ended ${before}` ? i : -1)).filter((i) => i >= 0);
      assert.equal(started.length, 2, events.join(' '));
      for (let f = 0; f < 2; f++) assert.ok(started[f] < ended[f], `range ${range} asked for after ${before} ended: ${events.join(' ')}`);
    }
    const items = await s.app.db.selectFrom('mailbox_migration_items').select(['folder', 'uid', 'rfc_id']).where('migration_id', '=', id).execute();
    assert.equal(items.length, THREADS * 2);
    assert.equal(new Set(items.map((i) => i.rfc_id)).size, THREADS * 2);
    const folders = await s.app.db
      .selectFrom('mailbox_migration_folders')
      .select(['path', 'scanned_uid', 'scan_done'])
      .where('migration_id', '=', id)
      .execute();
    assert.deepEqual(folders.map((f) => [f.path, Number(f.scanned_uid), Number(f.scan_done)]).sort(), [
      ['INBOX', THREADS, 1],
      ['Sent', THREADS, 1],
    ]);
    // The worker plans the copy from the stored headers.
    await s.app.jobs.drain();
    const ready = await expectState(s, seed.apiKey, id, 'ready');
    assert.equal(ready.plan.summary.total, THREADS * 2);
    assert.equal(ready.plan.summary.to_copy, THREADS * 2);
  });

  test('the copy parses each message as it arrives, and stores each once', async () => {
    assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);
    const events: Event[] = [];
    const parse = (raw: Buffer) => {
      events.push('parsed');
      return parseMail(raw);
    };
    const limits = { batchThreads: 100, batchMessages: 200, batchBytes: 8 * 1024 * 1024 };
    const updates = countingItemUpdates();
    const messageReads = countingReadsOf('messages');
    const inserts = Object.fromEntries(
      ['contacts', 'contact_emails', 'conversations', 'messages', 'mail_digests', 'mail_ids'].map((t) => [t, countingInsertsInto(t)]),
    );
    const lookups = Object.fromEntries(['mail_digests', 'mail_ids', 'contact_emails', 'conversations'].map((t) => [t, countingReadsOf(t)]));
    let db = s.app.db.withPlugin(updates).withPlugin(messageReads);
    for (const plugin of [...Object.values(inserts), ...Object.values(lookups)]) db = db.withPlugin(plugin);
    const ctx = { ...s.app, db };
    assert.equal(await copyStep(ctx, await migration(), recording(mailbox, events), { parse, limits }, 60_000), 'done');
    assert.equal(events.filter((e) => e === 'parsed').length, THREADS * 2);
    // One batch: its items and threads are marked in a few statements, not one per message and thread.
    assert.ok(updates.count <= 3, `${updates.count} updates of items and threads for one batch of ${THREADS * 2} messages`);
    // Conversations the batch created are settled from what it wrote: their messages are not read back.
    assert.equal(messageReads.count, 0, `${messageReads.count} reads of messages for one batch of ${THREADS} new conversations`);
    // The batch's new contacts (with their addresses), conversations, their messages (with dividers)
    // and stored-mail records: a few multi-row inserts.
    for (const [table, plugin] of Object.entries(inserts))
      assert.ok(plugin.count <= 1, `${plugin.count} inserts into ${table} for one batch of ${THREADS * 2} messages`);
    // Stored copies, the conversations of named Message-IDs and contacts by address are looked up
    // for the whole batch at once (mail_ids: by Message-ID for stored copies, and for threading).
    const lookupLimits: Record<string, number> = { mail_digests: 1, mail_ids: 2, contact_emails: 2, conversations: 0 };
    for (const [table, plugin] of Object.entries(lookups))
      assert.ok(plugin.count <= lookupLimits[table], `${plugin.count} reads of ${table} for one batch of ${THREADS * 2} messages and ${THREADS} threads`);
    assert.ok(events.indexOf('parsed') < events.indexOf('fetch_ended'), `parsing waited for the whole FETCH: ${events.join(' ')}`);
    const messages = await s.app.db
      .selectFrom('messages')
      .select(['mail_message_id'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('kind', '=', 'message')
      .execute();
    assert.equal(messages.length, THREADS * 2);
    assert.equal(new Set(messages.map((m) => m.mail_message_id)).size, THREADS * 2);
    const attachments = await s.app.db.selectFrom('attachments').select('id').where('workspace_id', '=', seed.workspaceId).execute();
    assert.equal(attachments.length, THREADS / 5);
    const left = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select('source_key')
      .where('migration_id', '=', id)
      .where('status', '!=', 'copied')
      .execute();
    assert.deepEqual(left, []);
  });

  test("a batch reads its threads' items by the thread index, not every item of the migration (SQLite)", async (t) => {
    if (!s.app.handle.sqliteFile) return t.skip('a SQLite query plan');
    const keys = Array.from({ length: 100 }, (_, i) => `thread-${i}`);
    const compiled = threadItemsQuery(s.app.db, id, keys).selectAll().compile();
    const reader = new Database(s.app.handle.sqliteFile, { readonly: true });
    try {
      const details = reader.prepare(`explain query plan ${compiled.sql}`).all(...(compiled.parameters as unknown[])) as { detail: string }[];
      const text = details.map((d) => d.detail).join(' / ');
      assert.match(text, /USING INDEX mailbox_migration_items_thread /, text);
    } finally {
      reader.close();
    }
  });

  test('the progress counts the items from the status index alone, not their rows (SQLite)', async (t) => {
    if (!s.app.handle.sqliteFile) return t.skip('a SQLite query plan');
    const compiled = itemCountsQuery(s.app.db, id).compile();
    const reader = new Database(s.app.handle.sqliteFile, { readonly: true });
    try {
      const details = reader.prepare(`explain query plan ${compiled.sql}`).all(...(compiled.parameters as unknown[])) as { detail: string }[];
      const text = details.map((d) => d.detail).join(' / ');
      assert.match(text, /USING COVERING INDEX mailbox_migration_items_status /, text);
    } finally {
      reader.close();
    }
  });
});

describe('the copy reads the next batch while one is written', { skip: dovecotMissing }, () => {
  let d: Dovecot;
  let s: TestServer;
  let seed: Seed;
  let mailbox: ReadOnlyMailbox;
  let id: string;
  const now = new Date();
  const clock = new ManualClock(now);
  const THREADS = 30;
  const limits = { batchThreads: 10, batchMessages: 200, batchBytes: 8 * 1024 * 1024 };

  before(async () => {
    ({ d, s, seed, id, mailbox } = await startBulkStepScene(clock, { threads: THREADS, perThread: 2, now, attachmentEvery: 3, attachmentBytes: 4000 }));
  });
  after(async () => {
    await stopStepScene({ s, mailbox }, d);
  });

  /** The scene's migration, scanned and started (copying). */
  async function startCopying(): Promise<void> {
    assert.equal((await s.request('POST', `/v1/migrations/${id}/scan`, { token: seed.apiKey })).status, 202);
    await s.app.jobs.drain();
    await expectState(s, seed.apiKey, id, 'ready');
    assert.equal((await s.request('POST', `/v1/migrations/${id}/start`, { token: seed.apiKey })).status, 202);
  }
  const migration = (id: string) => s.app.db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** The mailbox, noting each FETCH of whole messages as it starts. */
  function noteFetches(events: string[]): MailSource {
    return {
      get usable() {
        return mailbox.usable;
      },
      folders: () => mailbox.folders(),
      examine: (path) => mailbox.examine(path),
      uids: (from) => mailbox.uids(from),
      headers: (uids, fields) => mailbox.headers(uids, fields),
      async *sources(uids) {
        events.push('fetch');
        yield* mailbox.sources(uids);
      },
      logout: () => mailbox.logout(),
    };
  }

  test('a batch read ahead and not written (the migration was paused meanwhile) leaves no files', async () => {
    await startCopying();
    let parsed = 0;
    const parse = async (raw: Buffer) => {
      // Paused as the last message of the first batch is parsed: that batch's transaction finds the
      // migration paused, with the second batch being read.
      if (++parsed === 20) await s.app.db.updateTable('mailbox_migrations').set({ state: 'paused' }).where('id', '=', id).execute();
      return parseMail(raw);
    };
    const events: string[] = [];
    assert.equal(await copyStep(s.app, await migration(id), noteFetches(events), { parse, limits }, 60_000), 'stopped');
    assert.ok(events.length > 2, `the second batch was not read: ${events.join(' ')}`);
    const copied = await s.app.db
      .selectFrom('mailbox_migration_items')
      .select('source_key')
      .where('migration_id', '=', id)
      .where('status', '=', 'copied')
      .execute();
    assert.deepEqual(copied, []);
    assert.deepEqual(await referencedKeys(s.app.db), []);
    assert.deepEqual([...storedKeys(s.env.SVC_DATA_DIR)], []);
  });

  test('the next FETCH is sent before the batch before it is written, and every message is stored once', async () => {
    await s.app.db.updateTable('mailbox_migrations').set({ state: 'copying' }).where('id', '=', id).execute();
    const events: string[] = [];
    const written = countingInsertsInto('conversations');
    const notingWrites: KyselyPlugin = {
      transformQuery(args) {
        written.transformQuery(args);
        if (InsertQueryNode.is(args.node) && args.node.into?.table.identifier.name === 'conversations') events.push('write');
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const ctx = { ...s.app, db: s.app.db.withPlugin(notingWrites) };
    assert.equal(await copyStep(ctx, await migration(id), noteFetches(events), { parse: parseMail, limits }, 60_000), 'done');
    // Three batches of ten threads, each a FETCH in INBOX and one in Sent, each written once.
    assert.equal(events.filter((e) => e === 'write').length, 3, events.join(' '));
    assert.equal(events.filter((e) => e === 'fetch').length, 6, events.join(' '));
    const firstWrite = events.indexOf('write');
    assert.ok(
      events.slice(0, firstWrite).filter((e) => e === 'fetch').length > 2,
      `the second batch was read only after the first was written: ${events.join(' ')}`,
    );
    const messages = await s.app.db
      .selectFrom('messages')
      .select(['mail_message_id'])
      .where('workspace_id', '=', seed.workspaceId)
      .where('kind', '=', 'message')
      .execute();
    assert.equal(messages.length, THREADS * 2);
    assert.equal(new Set(messages.map((m) => m.mail_message_id)).size, THREADS * 2);
    const left = await s.app.db
      .selectFrom('mailbox_migration_threads')
      .select('thread_key')
      .where('migration_id', '=', id)
      .where('status', '!=', 'copied')
      .execute();
    assert.deepEqual(left, []);
    // Every stored file is one a row refers to.
    assert.deepEqual([...storedKeys(s.env.SVC_DATA_DIR)].sort(), (await referencedKeys(s.app.db)).sort());
  });
});
