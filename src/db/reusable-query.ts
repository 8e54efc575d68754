// Queries on the request path that are built and compiled once per dialect and then run with new
// parameter values: kysely otherwise builds the operation tree and compiles it to SQL on every call,
// which costs more than running a small query on SQLite. The SQL text is the same string each time.
//
// On SQLite a read outside any transaction goes straight to its prepared statement: better-sqlite3
// answers synchronously, and kysely's executor, connection provider and connection lock would add
// a dozen promise steps (more than the read itself) for nothing. The connection lock only matters
// while a transaction is open on the connection (`inTransaction`): then the read waits its turn
// through kysely as before, so it never sees another caller's uncommitted rows. The statement hands
// out arrays (`raw`), made into row objects here: better-sqlite3 builds each row object through the
// V8 API one property at a time, which cost more than the read itself under load.
//
// On Postgres a read outside any transaction goes straight to the pool as a named prepared statement
// (parsed and planned once per connection instead of on every call, and none of kysely's promise
// steps); inside a transaction it goes through kysely on the transaction's connection.
import type SQLite from 'better-sqlite3';
import { type Compilable, CompiledQuery, type Insertable, type InsertQueryBuilder, type InsertResult, type Kysely } from 'kysely';
import { postgresPoolOf, sqliteConnectionOf } from './connection.js';
import { isPostgres } from './dialect.js';
import type { Database, Db } from './schema.js';

/** A parameter of a reusable query: build() gets these in place of the values. */
type Slot = { slot: number };

interface Compiled {
  sql: string;
  /** Per parameter: the index of the value it takes, or the constant it keeps. */
  parameters: ({ slot: number } | { constant: unknown })[];
  /** The name of its prepared statement on Postgres; null once Postgres refused it (see below). */
  statementName: string | null;
}

interface SqliteStatement {
  statement: SQLite.Statement;
  columns: string[];
}

export interface ReusableQuery<Row, V extends unknown[]> {
  /** The rows for these values. */
  (db: Db, ...values: V): Promise<Row[]>;
  /**
   * The rows at once when the query can run without waiting (SQLite, no transaction open on the
   * connection); otherwise undefined, and the caller awaits the query instead.
   */
  now(db: Db, ...values: V): Row[] | undefined;
}

let statementNames = 0;

/**
 * `build(db, p0, p1, …)` must use each placeholder as a plain value (`where('id', '=', p0)`);
 * the returned function runs the compiled query with `values` in their place and answers its rows.
 */
export function reusableQuery<Row, V extends unknown[]>(build: (db: Kysely<Database>, ...placeholders: V) => Compilable<Row>): ReusableQuery<Row, V> {
  const byDialect = new Map<boolean, Compiled>();
  const statements = new WeakMap<SQLite.Database, SqliteStatement>();
  const statementName = `svc_rq_${++statementNames}`;

  const compiledFor = (db: Db, postgres: boolean, values: V): Compiled => {
    let compiled = byDialect.get(postgres);
    if (!compiled) {
      const slots = values.map((_, i): Slot => ({ slot: i }));
      const q = build(db as Kysely<Database>, ...(slots as V)).compile();
      compiled = {
        sql: q.sql,
        parameters: q.parameters.map((p) => (isSlot(p, slots) ? { slot: (p as Slot).slot } : { constant: p })),
        statementName: postgres ? statementName : null,
      };
      if (compiled.parameters.filter((p) => 'slot' in p).length !== values.length) {
        throw new Error(`reusableQuery: every placeholder must appear once as a parameter (${q.sql})`);
      }
      byDialect.set(postgres, compiled);
    }
    return compiled;
  };
  const parametersOf = (compiled: Compiled, values: V) => compiled.parameters.map((p) => ('slot' in p ? values[p.slot] : p.constant));

  const now = (db: Db, ...values: V): Row[] | undefined => {
    const sqlite = sqliteConnectionOf(db);
    if (!sqlite?.open || sqlite.inTransaction) return undefined;
    const compiled = compiledFor(db, false, values);
    let prepared = statements.get(sqlite);
    if (!prepared) {
      const statement = sqlite.prepare(compiled.sql);
      if (!statement.reader) throw new Error(`reusableQuery: only reads run directly on SQLite (${compiled.sql})`);
      prepared = { statement: statement.raw(true), columns: statement.columns().map((c) => c.name) };
      statements.set(sqlite, prepared);
    }
    const rows = prepared.statement.all(parametersOf(compiled, values)) as unknown[][];
    // SQLite prepares a statement again after a schema change, and `*` may then name more columns.
    if (rows.length > 0 && rows[0].length !== prepared.columns.length) prepared.columns = prepared.statement.columns().map((c) => c.name);
    const { columns } = prepared;
    const answer = new Array<Row>(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const values = rows[r];
      // A later column of the same name wins, as in better-sqlite3's own row objects.
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) row[columns[i]] = values[i];
      answer[r] = row as Row;
    }
    return answer;
  };

  const run = async (db: Db, ...values: V): Promise<Row[]> => {
    const rows = now(db, ...values);
    if (rows) return rows;
    const pool = postgresPoolOf(db);
    const compiled = compiledFor(db, sqliteConnectionOf(db) ? false : isPostgres(db), values);
    const parameters = parametersOf(compiled, values);
    if (pool && compiled.statementName) {
      try {
        return (await pool.query({ name: compiled.statementName, text: compiled.sql, values: parameters })).rows as Row[];
      } catch (error) {
        // A prepared statement's result columns are fixed when it is prepared: after a migration
        // changed a table it reads (another process upgraded the schema), Postgres refuses it with
        // "cached plan must not change result type". The query goes unprepared from then on.
        if ((error as { code?: string }).code !== '0A000') throw error;
        compiled.statementName = null;
      }
    }
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
  return Object.assign(run, { now });
}

function isSlot(value: unknown, slots: Slot[]): boolean {
  return slots.includes(value as Slot);
}

/**
 * A one-row insert built and compiled once per dialect and set of columns (the row's own keys, in
 * order), then run with the row's values through the caller's connection or transaction. `finish`
 * adds what follows the values (an `on conflict` clause). Answers the number of rows written.
 * If kysely would pass the row's values other than as given (no such plugin is used today), the
 * statement is built for every row instead.
 */
export function reusableInsert<T extends keyof Database & string>(
  table: T,
  finish: (query: InsertQueryBuilder<Database, T, InsertResult>) => InsertQueryBuilder<Database, T, InsertResult> = (query) => query,
) {
  const texts = new Map<string, string | null>();
  return async (db: Db, row: Insertable<Database[T]>): Promise<number> => {
    const columns = Object.keys(row) as (keyof typeof row & string)[];
    const values = columns.map((c) => row[c] as unknown);
    const key = `${isPostgres(db)}|${columns.join(',')}`;
    let text = texts.get(key);
    if (text === undefined) {
      const q = finish((db as Kysely<Database>).insertInto(table).values(row)).compile();
      const same = q.parameters.length === values.length && q.parameters.every((p, i) => p === values[i]);
      text = same ? q.sql : null;
      texts.set(key, text);
    }
    if (text === null) {
      const result = await finish((db as Kysely<Database>).insertInto(table).values(row)).execute();
      return Number(result[0]?.numInsertedOrUpdatedRows ?? 0n);
    }
    const result = await db.executeQuery(CompiledQuery.raw(text, values));
    return Number(result.numAffectedRows ?? 0n);
  };
}
