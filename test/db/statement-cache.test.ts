// The SQLite statement cache (src/db/connection.ts): recent statements are kept, but those with
// many parameters (an `in` list, a multi-row insert, whose length changes from call to call) only
// within a bound of parameters, since each holds its compiled program in native memory (issue 19:
// a copy's batches filled a cache of 1,000 statements with tens of MB).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { KEPT_PARAMETERS, MANY_PARAMETERS, withStatementCache } from '../../src/db/connection.js';

function database() {
  const sqlite = new SQLite(':memory:');
  sqlite.exec('create table mail_ids (rfc_id text primary key, conversation_id text not null)');
  sqlite.prepare('insert into mail_ids values (?, ?)').run('a@x', 'cv_a');
  return { sqlite, cache: withStatementCache(sqlite) };
}

/** A lookup by an `in` list of n Message-IDs, as a copy batch's conversationsByMailId makes. */
const lookup = (n: number) => `select "rfc_id", "conversation_id" from "mail_ids" where "rfc_id" in (${Array(n).fill('?').join(', ')})`;

describe('statement cache', () => {
  test('keeps a statement with few parameters and hands it out again', () => {
    const { sqlite, cache } = database();
    const text = 'select "conversation_id" from "mail_ids" where "rfc_id" = ?';
    const first = cache.prepare(text);
    assert.equal(cache.prepare(text), first);
    assert.deepEqual(first.all('a@x'), [{ conversation_id: 'cv_a' }]);
    assert.deepEqual(cache.cached(), { statements: 1, many: 0, manyParameters: 0 });
    sqlite.close();
  });

  test('keeps lists of changing length only within the bound of parameters, and each still answers', () => {
    const { sqlite, cache } = database();
    // A long copy asks lists of many lengths (stored copies, Message-IDs, contacts, inserts).
    for (let n = 1; n <= 1000; n++) {
      const ids = Array.from({ length: n }, (_, i) => (i === n - 1 ? 'a@x' : `none${i}@x`));
      assert.deepEqual(cache.prepare(lookup(n)).all(...ids), [{ rfc_id: 'a@x', conversation_id: 'cv_a' }], `list of ${n}`);
      assert.ok(cache.cached().manyParameters <= KEPT_PARAMETERS, `list of ${n}: ${cache.cached().manyParameters} parameters kept`);
    }
    const kept = cache.cached();
    const madeWithMany = 1000 - MANY_PARAMETERS;
    assert.ok(kept.many > 0 && kept.many < madeWithMany / 4, `${kept.many} of ${madeWithMany} lists kept`);
    assert.equal(kept.statements - kept.many, MANY_PARAMETERS, 'the lists with few parameters are all kept');
    sqlite.close();
  });

  test('a list used again while others come and go stays kept', () => {
    const { sqlite, cache } = database();
    const hot = lookup(400);
    const first = cache.prepare(hot);
    for (let n = 401; n <= 1000; n++) {
      cache.prepare(lookup(n));
      assert.equal(cache.prepare(hot), first, `after the list of ${n}`);
    }
    assert.ok(cache.cached().manyParameters <= KEPT_PARAMETERS);
    sqlite.close();
  });
});

describe('writes seen by the statement cache', () => {
  test('onWrite runs for statements that may change the database and commits, not for reads or other transaction control', () => {
    const sqlite = new SQLite(':memory:');
    sqlite.exec('create table t (x integer)');
    const seen: string[] = [];
    const cache = withStatementCache(sqlite, 1000, () => seen.push('write'));
    for (const text of ['begin immediate', 'select x from t', 'savepoint a', 'release a', 'rollback']) cache.prepare(text).run();
    assert.deepEqual(seen, []);
    cache.prepare('begin immediate').run();
    cache.prepare('commit').run();
    assert.equal(seen.length, 1);
    seen.length = 0;
    cache.prepare('insert into t values (?)').run(1);
    cache.prepare('insert into t values (?)').run(2);
    cache.prepare('delete from t where x = ?').run(1);
    cache.prepare('insert into t values (?) returning x').get(3);
    assert.equal(seen.length, 4);
    sqlite.close();
  });
});
