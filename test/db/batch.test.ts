import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Transaction } from 'kysely';
import { TransactionBatcher } from '../../src/db/batch.js';
import type { Database } from '../../src/db/schema.js';
import { type DurableFs, nodeDurableFs } from '../../src/platform/durable.js';
import { LocalStorage } from '../../src/platform/storage.js';
import { startTestServer, tempDir } from '../helpers/server.js';

describe('group commit (TransactionBatcher)', () => {
  test('works submitted together share a transaction; a failing one is undone alone', async () => {
    const s = await startTestServer();
    try {
      const key = (n: number) => `batch-test-${n}`;
      const insert = (n: number) => (trx: Parameters<Parameters<typeof s.app.writes.run>[0]>[0]) =>
        trx
          .insertInto('server_meta')
          .values({ key: key(n), value: String(n) })
          .execute()
          .then(() => n);
      const results = await Promise.allSettled([
        s.app.writes.run(insert(1)),
        s.app.writes.run(async (trx) => {
          await insert(2)(trx);
          throw new Error('second fails');
        }),
        s.app.writes.run(insert(3)),
        // A constraint violation inside one work leaves the others usable (Postgres aborts the
        // transaction on an error; the savepoint brings it back).
        s.app.writes.run(insert(1)),
        s.app.writes.run(insert(4)),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled'],
      );
      const rows = await s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'batch-test-%').orderBy('key').execute();
      assert.deepEqual(
        rows.map((r) => r.key),
        [key(1), key(3), key(4)],
      );
      // A lone work behaves like its own transaction.
      await assert.rejects(
        s.app.writes.run(async (trx) => {
          await insert(5)(trx);
          await sql`select * from no_such_table`.execute(trx);
        }),
      );
      assert.equal((await s.app.db.selectFrom('server_meta').select('key').where('key', '=', key(5)).execute()).length, 0);
    } finally {
      await s.stop();
    }
  });

  test('a batch that fails as a whole is run again work by work: only the bad one is refused, none is stored twice', async () => {
    const s = await startTestServer();
    try {
      const insert = (n: number) => (trx: Transaction<Database>) =>
        trx
          .insertInto('server_meta')
          .values({ key: `fallback-${n}`, value: String(n) })
          .execute()
          .then(() => n);
      let badRuns = 0;
      const results = await Promise.allSettled([
        s.app.writes.run(insert(1)),
        // Drops its own savepoint before failing, as SQLite does when an I/O error or a full disk
        // rolls the whole transaction back: the batch cannot undo this work alone.
        s.app.writes.run(async (trx) => {
          badRuns++;
          await insert(2)(trx);
          await sql.raw('release savepoint batch_1').execute(trx);
          throw new Error('bad work');
        }),
        s.app.writes.run(insert(3)),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal(badRuns, 2, 'tried in the batch, then alone');
      const rows = await s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'fallback-%').orderBy('key').execute();
      assert.deepEqual(
        rows.map((r) => r.key),
        ['fallback-1', 'fallback-3'],
      );
    } finally {
      await s.stop();
    }
  });

  test("a batch's files are flushed before its commit: each file once, each directory once per batch; a file that fails to flush refuses only its work", async () => {
    const s = await startTestServer();
    const root = path.join(tempDir(), 'files');
    const ops: string[] = [];
    let holdFile: string | undefined;
    let releaseHeld!: () => void;
    let heldEntered!: () => void;
    const held = new Promise<void>((r) => (heldEntered = r));
    const recording: DurableFs = {
      ...nodeDurableFs,
      async flushCreated(file, fd) {
        if (path.basename(file) === holdFile) {
          heldEntered();
          await new Promise<void>((r) => (releaseHeld = r));
        }
        if (path.basename(file).startsWith('bad')) {
          await nodeDurableFs.flushCreated(file, fd);
          throw new Error('EIO');
        }
        await nodeDurableFs.flushCreated(file, fd);
        ops.push(`flush ${path.relative(root, file)}`);
      },
      async syncDir(dir) {
        await nodeDurableFs.syncDir(dir);
        ops.push(`sync dir ${path.relative(root, dir) || '.'}`);
      },
    };
    const storage = new LocalStorage(root, recording);
    const batcher = new TransactionBatcher(s.app.handle.db, {
      flushFiles: (files) => storage.flushWritten(files),
      flushCommits: async () => {
        ops.push('commit flushed');
      },
    });
    const insert = (key: string) => (trx: Transaction<Database>) => trx.insertInto('server_meta').values({ key, value: '1' }).execute();
    try {
      const files = [];
      for (let i = 0; i < 3; i++)
        files.push([await storage.write(`ws_1/eml/m${i}`, Buffer.from(`mail ${i}`)), await storage.write(`ws_1/att/a${i}`, Buffer.from(`att ${i}`))]);
      ops.length = 0; // the directories' first flushes (when they were made)
      holdFile = 'a2';
      let answered = 0;
      const runs = files.map((f, i) => batcher.run(insert(`files-${i}`), { files: f }).then(() => answered++));
      await held;
      await sleep(20);
      assert.equal(answered, 0, 'no work is answered while one of the batch files is being flushed');
      assert.ok(!ops.includes('commit flushed'), 'not committed before the files are on disk');
      releaseHeld();
      await Promise.all(runs);
      assert.equal(ops.at(-1), 'commit flushed');
      assert.deepEqual(ops.filter((o) => o === 'commit flushed').length, 1, 'one batch');
      assert.deepEqual(
        ops.filter((o) => o.startsWith('sync dir')).sort(),
        ['sync dir ws_1/att', 'sync dir ws_1/eml'],
        'each directory flushed once for the batch, not once per file',
      );
      assert.deepEqual(ops.filter((o) => o.startsWith('flush ')).sort(), [
        'flush ws_1/att/a0',
        'flush ws_1/att/a1',
        'flush ws_1/att/a2',
        'flush ws_1/eml/m0',
        'flush ws_1/eml/m1',
        'flush ws_1/eml/m2',
      ]);
      assert.equal(fs.readFileSync(path.join(root, 'ws_1/eml/m1'), 'utf8'), 'mail 1');

      // Asked again (a work retried in a later batch): the files are not flushed twice.
      ops.length = 0;
      await batcher.run(insert('files-again'), { files: files[0] });
      assert.deepEqual(
        ops.filter((o) => o.startsWith('flush ')),
        [],
      );

      const good = await storage.write('ws_1/eml/good', Buffer.from('good'));
      const bad = await storage.write('ws_1/eml/bad', Buffer.from('bad'));
      const outcomes = await Promise.allSettled([batcher.run(insert('files-good'), { files: [good] }), batcher.run(insert('files-bad'), { files: [bad] })]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected'],
      );
      const rows = await s.app.db.selectFrom('server_meta').select('key').where('key', 'like', 'files-%').orderBy('key').execute();
      assert.deepEqual(
        rows.map((r) => r.key),
        ['files-0', 'files-1', 'files-2', 'files-again', 'files-good'],
      );
      await assert.rejects(storage.flushWritten([bad]), /EIO/, 'a failed flush does not pass for done when asked again');
      await storage.delete('ws_1/eml/bad');
      assert.equal(fs.existsSync(path.join(root, 'ws_1/eml/bad')), false);
    } finally {
      await s.stop();
      fs.rmSync(path.dirname(root), { recursive: true, force: true });
    }
  });

  test('answers wait for the flush to disk; a failed flush refuses what it could not make durable', async () => {
    const s = await startTestServer();
    try {
      let release!: () => void;
      let entered!: () => void;
      const flushEntered = new Promise<void>((r) => (entered = r));
      let failFlush = false;
      const batcher = new TransactionBatcher(s.app.handle.db, {
        flushCommits: () => {
          if (failFlush) return Promise.reject(new Error('EIO'));
          entered();
          return new Promise<void>((r) => (release = r));
        },
      });
      let answered = false;
      const run = batcher.run((trx) => trx.insertInto('server_meta').values({ key: 'flush-1', value: '1' }).execute()).then(() => (answered = true));
      await flushEntered;
      // Committed (another reader sees it) but not yet answered.
      assert.equal((await s.app.db.selectFrom('server_meta').select('key').where('key', '=', 'flush-1').execute()).length, 1);
      await sleep(20);
      assert.equal(answered, false, 'no answer before the flush');
      release();
      await run;
      assert.equal(answered, true);

      failFlush = true;
      await assert.rejects(
        batcher.run((trx) => trx.insertInto('server_meta').values({ key: 'flush-2', value: '2' }).execute()),
        /EIO/,
      );
    } finally {
      await s.stop();
    }
  });
  test('works that come while a flush runs are committed together once it has ended', async () => {
    const s = await startTestServer();
    try {
      const releases: (() => void)[] = [];
      let flushes = 0;
      const batcher = new TransactionBatcher(s.app.handle.db, {
        flushCommits: () => {
          flushes++;
          return new Promise<void>((r) => releases.push(r));
        },
      });
      const transactions: Transaction<Database>[] = [];
      const insert = (key: string) => (trx: Transaction<Database>) => {
        transactions.push(trx);
        return trx.insertInto('server_meta').values({ key, value: key }).execute();
      };
      const stored = async (key: string) => (await s.app.db.selectFrom('server_meta').select('key').where('key', '=', key).execute()).length;
      const first = batcher.run(insert('during-flush-a'));
      while (flushes === 0) await sleep(5);
      // The first batch is committed and its flush held; two works come one after the other.
      const second = batcher.run(insert('during-flush-b'));
      await sleep(20);
      const third = batcher.run(insert('during-flush-c'));
      await sleep(20);
      assert.equal(await stored('during-flush-a'), 1);
      assert.equal(await stored('during-flush-b'), 0, 'not committed while the flush runs');
      assert.equal(flushes, 1);
      releases[0]();
      await first;
      while (flushes === 1) await sleep(5);
      assert.equal(await stored('during-flush-b'), 1);
      assert.equal(await stored('during-flush-c'), 1);
      assert.equal(transactions.length, 3);
      assert.equal(transactions[1], transactions[2], 'one transaction for both');
      releases[1]();
      await Promise.all([second, third]);
    } finally {
      await s.stop();
    }
  });
  test("the next works' files are flushed while the last batch's commit is flushed, and they join the commit after it", async () => {
    const s = await startTestServer();
    try {
      const commitReleases: (() => void)[] = [];
      const flushedFiles: string[] = [];
      const batcher = new TransactionBatcher(s.app.handle.db, {
        flushCommits: () => new Promise<void>((r) => commitReleases.push(r)),
        flushFiles: async (files) => {
          flushedFiles.push(...files.map((f) => f.key));
        },
      });
      const insert = (key: string) => (trx: Transaction<Database>) => trx.insertInto('server_meta').values({ key, value: key }).execute();
      const stored = async (key: string) => (await s.app.db.selectFrom('server_meta').select('key').where('key', '=', key).execute()).length;
      const until = async (what: string, predicate: () => boolean | Promise<boolean>) => {
        const deadline = Date.now() + 10_000;
        while (!(await predicate())) {
          if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
          await sleep(5);
        }
      };
      const first = batcher.run(insert('pipeline-a'));
      await until('the first commit flush', () => commitReleases.length === 1);
      // The first batch is committed and its flush held; a work with a file comes.
      const file = { key: 'ws/eml/pipeline-b', size: 1, sha256: 'x' };
      const second = batcher.run(insert('pipeline-b'), { files: [file] });
      await until("the second work's file flush", () => flushedFiles.includes(file.key));
      assert.equal(await stored('pipeline-b'), 0, 'not committed while the last commit is flushed');
      assert.equal(commitReleases.length, 1);
      commitReleases[0]();
      await first;
      await until('the second commit flush', () => commitReleases.length === 2);
      assert.equal(await stored('pipeline-b'), 1);
      commitReleases[1]();
      await second;
      assert.deepEqual(flushedFiles, [file.key], 'each file flushed once');
    } finally {
      await s.stop();
    }
  });
});
