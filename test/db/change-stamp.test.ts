// The SQLite change stamp (src/db/change-stamp.ts): read from the wal-index header without a
// statement, equal while nothing was committed, different after any connection's commit (this
// one's, another's in this process, another process's), none inside a transaction or for a torn
// header, and the statement's stamp outside WAL mode.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { sqliteChangeStamp } from '../../src/db/change-stamp.js';
import { type DbHandle, openDatabase } from '../../src/db/connection.js';
import { tempDir } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const SQLite = require('better-sqlite3') as typeof import('better-sqlite3');

describe('the SQLite change stamp', () => {
  let dir: string;
  let handle: DbHandle;
  let file: string;
  before(async () => {
    dir = tempDir('svc-stamp-');
    handle = openDatabase({ dataDir: dir });
    file = path.join(dir, 'svc.db');
    await sql`create table t (x integer)`.execute(handle.db);
  });
  after(async () => {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('runs no statement and stays equal while nothing is committed', () => {
    const statementProto = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1'));
    const get = statementProto.get;
    let statements = 0;
    statementProto.get = function (this: unknown, ...args: unknown[]) {
      statements++;
      return get.apply(this, args);
    };
    try {
      const first = sqliteChangeStamp(handle.db);
      assert.equal(typeof first, 'string');
      assert.equal(sqliteChangeStamp(handle.db), first);
      assert.equal(sqliteChangeStamp(handle.db), first);
      // The first call may look up the journal mode (a pragma); later ones read the header alone.
      statements = 0;
      sqliteChangeStamp(handle.db);
      assert.equal(statements, 0);
    } finally {
      statementProto.get = get;
    }
  });

  test("moves with this connection's commits, not with a rolled-back transaction", async () => {
    const before = sqliteChangeStamp(handle.db);
    await sql`insert into t (x) values (1)`.execute(handle.db);
    const afterInsert = sqliteChangeStamp(handle.db);
    assert.notEqual(afterInsert, before);
    await assert.rejects(
      handle.db.transaction().execute(async (trx) => {
        await sql`insert into t (x) values (2)`.execute(trx);
        throw new Error('roll back');
      }),
    );
    assert.equal(sqliteChangeStamp(handle.db), afterInsert);
  });

  test('none while a transaction is open on the connection', async () => {
    await handle.db.transaction().execute(async () => {
      assert.equal(sqliteChangeStamp(handle.db), undefined);
    });
    assert.equal(typeof sqliteChangeStamp(handle.db), 'string');
  });

  test("moves with another connection's commit and with another process's", () => {
    const before = sqliteChangeStamp(handle.db);
    const other = new SQLite(file);
    other.prepare('insert into t (x) values (3)').run();
    other.close();
    const afterOther = sqliteChangeStamp(handle.db);
    assert.notEqual(afterOther, before);
    execFileSync(process.execPath, [
      '-e',
      `const D = require(${JSON.stringify(require.resolve('better-sqlite3'))}); const db = new D(${JSON.stringify(file)}); db.prepare('insert into t (x) values (4)').run(); db.close();`,
    ]);
    assert.notEqual(sqliteChangeStamp(handle.db), afterOther);
    // Every insert is there: the stamp followed commits, it did not lose any.
    assert.equal(new SQLite(file, { readonly: true }).prepare('select count(*) from t').pluck().get(), 3);
  });

  test('none when the two copies of the header differ (a writer caught half-way)', () => {
    const shm = fs.openSync(`${file}-shm`, 'r+');
    try {
      const copy = Buffer.alloc(4);
      // iChange of the second copy (offset 48 + 8).
      fs.readSync(shm, copy, 0, 4, 56);
      const changed = Buffer.from(copy);
      changed[0] ^= 0xff;
      fs.writeSync(shm, changed, 0, 4, 56);
      assert.equal(sqliteChangeStamp(handle.db), undefined);
      fs.writeSync(shm, copy, 0, 4, 56);
      assert.equal(typeof sqliteChangeStamp(handle.db), 'string');
    } finally {
      fs.closeSync(shm);
    }
  });

  test('outside WAL mode the stamp is a statement, and still moves with commits', async () => {
    const rollbackDir = tempDir('svc-stamp-delete-');
    const rollback = openDatabase({ dataDir: rollbackDir });
    try {
      await sql`pragma journal_mode = delete`.execute(rollback.db);
      await sql`create table t (x integer)`.execute(rollback.db);
      const before = sqliteChangeStamp(rollback.db);
      assert.equal(typeof before, 'string');
      assert.equal(sqliteChangeStamp(rollback.db), before);
      await sql`insert into t (x) values (1)`.execute(rollback.db);
      assert.notEqual(sqliteChangeStamp(rollback.db), before);
    } finally {
      await rollback.close();
      fs.rmSync(rollbackDir, { recursive: true, force: true });
    }
  });
});
