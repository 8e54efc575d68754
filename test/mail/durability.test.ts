// A 250 (and the ingress route's 201) must survive power loss: the raw .eml is flushed to disk, then
// its directory, then the transaction that refers to it commits, then (SQLite) the WAL is flushed,
// and only then does the sender get its answer. Observed through a recording DurableFs that reads
// the committed rows from a second connection at each flush; no timing is asserted (a flush that is
// held back a little would let a premature answer arrive first).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { type DurableFs, nodeDurableFs, SharedFlush } from '../../src/platform/durable.js';
import { createLogger } from '../../src/platform/log.js';
import { LocalStorage } from '../../src/platform/storage.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { ingressPort, rawMail, seedEmailChannel, sendToIngress } from '../helpers/mail.js';
import { startTestServer, type TestServer, tempDir } from '../helpers/server.js';

const SECRET = 'durability-secret';

describe('durable before the answer: .eml, directory, commit, WAL', () => {
  let s: TestServer;
  let reader: App;
  let address: string;
  const events: string[] = [];
  let watched: string | undefined;

  /** Stored messages with the watched subject, as another connection sees them (committed only). */
  const committed = async () =>
    Number(
      (
        await reader.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('subject', '=', watched!)
          .executeTakeFirstOrThrow()
      ).n,
    );

  const recording: DurableFs = {
    async createFile(file, data, mode, flushEntry) {
      await nodeDurableFs.createFile(file, data, mode, flushEntry);
      if (watched && file.includes(`${path.sep}eml${path.sep}`)) events.push(`eml flushed, committed ${await committed()}`);
    },
    createUnflushed: (file, data, mode) => nodeDurableFs.createUnflushed(file, data, mode),
    async flushCreated(file, fd) {
      await nodeDurableFs.flushCreated(file, fd);
      if (watched && file.includes(`${path.sep}eml${path.sep}`)) events.push(`eml flushed, committed ${await committed()}`);
    },
    async syncDir(dir) {
      await nodeDurableFs.syncDir(dir);
      if (watched && path.basename(dir) === 'eml') events.push(`eml directory flushed, committed ${await committed()}`);
    },
    async syncFile(file) {
      if (watched && file.endsWith('-wal')) {
        const rows = await committed();
        // Held back: an answer that does not wait for this flush would be recorded before it.
        await sleep(150);
        await nodeDurableFs.syncFile(file);
        events.push(`wal flushed, committed ${rows}`);
        return;
      }
      await nodeDurableFs.syncFile(file);
    },
  };

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET }, durable: recording });
    reader = buildServices(loadConfig(s.env), { log: createLogger({ level: 'error', write: () => {} }) });
    const seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(async () => {
    await reader?.close();
    await s?.stop();
  });

  const expected = (answer: string) =>
    s.app.dialect === 'sqlite'
      ? ['eml directory flushed, committed 0', 'eml flushed, committed 0', 'wal flushed, committed 1', answer]
      : // Postgres: the commit returns once its WAL record is flushed (synchronous_commit, kept on).
        ['eml directory flushed, committed 0', 'eml flushed, committed 0', answer];
  // The .eml and its directory are flushed side by side: either may finish first.
  const inOrder = (seen: string[]) => [...seen.slice(0, 2).sort(), ...seen.slice(2)];

  test('SMTP: the 250 comes after the .eml, its directory, the commit and the WAL are on disk', async () => {
    events.length = 0;
    watched = 'Durable over SMTP';
    const info = await sendToIngress(ingressPort(s), { to: address, subject: watched, text: 'Keep me.' });
    events.push(`answer ${info.response.slice(0, 3)}`);
    assert.deepEqual(inOrder(events), expected('answer 250'));
    assert.equal(await committed(), 1);
    watched = undefined;
  });

  test('HTTP ingress: the 201 comes after the same flushes', async () => {
    events.length = 0;
    watched = 'Durable over HTTP';
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, Subject: watched }, 'Keep me too.\r\n'),
      token: SECRET,
    });
    events.push(`answer ${r.status}`);
    assert.deepEqual(inOrder(events), expected('answer 201'));
    watched = undefined;
  });

  test('Postgres keeps commits synchronous', { skip: !process.env.SVC_TEST_DATABASE_URL && 'SQLite run' }, async () => {
    const { sql } = await import('kysely');
    const row = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(s.app.db);
    assert.notEqual(row.rows[0].synchronous_commit, 'off');
  });
});

describe('local storage flushes what it writes', () => {
  test('a new file, its directory and new parent directories; a replaced file before its rename', async () => {
    const root = path.join(tempDir(), 'files');
    const ops: string[] = [];
    const rel = (p: string) => path.relative(path.dirname(root), p) || '.';
    const storage = new LocalStorage(root, {
      createFile: (file, data, mode, flushEntry) => {
        ops.push(`create ${rel(file)}`);
        return nodeDurableFs.createFile(file, data, mode, flushEntry);
      },
      syncFile: (file) => {
        ops.push(`sync ${rel(file).startsWith('files/.tmp/') ? 'files/.tmp/<spool>' : rel(file)}`);
        return nodeDurableFs.syncFile(file);
      },
      syncDir: (dir) => {
        ops.push(`sync dir ${rel(dir)}`);
        return nodeDurableFs.syncDir(dir);
      },
      createUnflushed: (file, data, mode) => {
        ops.push(`create unflushed ${rel(file)}`);
        return nodeDurableFs.createUnflushed(file, data, mode);
      },
      flushCreated: (file, fd) => {
        ops.push(`flush ${rel(file)}`);
        return nodeDurableFs.flushCreated(file, fd);
      },
    });
    try {
      await storage.put('ws_1/eml/one', Buffer.from('first'));
      assert.deepEqual(ops.splice(0), ['sync dir files/ws_1', 'sync dir files', 'sync dir .', 'create files/ws_1/eml/one', 'sync dir files/ws_1/eml']);
      await storage.put('ws_1/eml/two', Buffer.from('second'));
      assert.deepEqual(ops.splice(0), ['create files/ws_1/eml/two', 'sync dir files/ws_1/eml']);
      await storage.put('ws_1/eml/two', Readable.from([Buffer.from('replaced')]));
      assert.deepEqual(ops.splice(0), ['sync files/.tmp/<spool>', 'sync dir files/ws_1/eml']);
      assert.equal(fs.readFileSync(path.join(root, 'ws_1/eml/two'), 'utf8'), 'replaced');
    } finally {
      fs.rmSync(path.dirname(root), { recursive: true, force: true });
    }
  });

  test('nodeDurableFs: a directory flush reuses one open descriptor; a created file has its data, an existing one is refused', async () => {
    const dir = tempDir();
    const descriptorsOf = (target: string) =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === target;
        } catch {
          return false;
        }
      }).length;
    try {
      for (let i = 0; i < 20; i++) await nodeDurableFs.syncDir(dir);
      assert.equal(descriptorsOf(dir), 1, 'one descriptor kept open for the directory, not one per flush');
      const file = path.join(dir, 'one.eml');
      await nodeDurableFs.createFile(file, Buffer.from('first'), 0o600, () => nodeDurableFs.syncDir(dir));
      assert.equal(fs.readFileSync(file, 'utf8'), 'first');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      await assert.rejects(nodeDurableFs.createFile(file, Buffer.from('second'), 0o600), { code: 'EEXIST' });
      assert.equal(fs.readFileSync(file, 'utf8'), 'first');
      assert.equal(descriptorsOf(dir), 1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('concurrent flushes of one directory share: a request waits for a flush that started after it', async () => {
    const gates: (() => void)[] = [];
    let flushes = 0;
    const shared = new SharedFlush(() => {
      flushes++;
      return new Promise<void>((resolve) => gates.push(resolve));
    });
    const done: string[] = [];
    const first = shared.sync('d').then(() => done.push('first'));
    const later = Array.from({ length: 5 }, (_, i) => shared.sync('d').then(() => done.push(`later ${i}`)));
    const other = shared.sync('e').then(() => done.push('other key'));
    assert.equal(flushes, 2, 'one flush per key running');
    gates.shift()!(); // the first flush of d ends: the five that asked during it need one more
    await first;
    assert.deepEqual(done, ['first']);
    await sleep(0);
    assert.equal(flushes, 3);
    gates.shift()!(); // e
    await other;
    gates.shift()!(); // the shared second flush of d
    await Promise.all(later);
    assert.equal(flushes, 3);
    assert.deepEqual(done.slice(2).sort(), ['later 0', 'later 1', 'later 2', 'later 3', 'later 4']);
  });
});
