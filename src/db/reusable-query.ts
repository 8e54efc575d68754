// Queries on the request path that are built and compiled once per dialect and then run with new
// parameter values: kysely otherwise builds the operation tree and compiles it to SQL on every call,
// which costs more than running a small query on SQLite. The SQL text is the same string each time,
// so SQLite's statement cache (src/db/connection.ts) finds its prepared statement at once.
//
// On SQLite a read outside any transaction goes straight to its prepared statement: better-sqlite3
// answers synchronously, and kysely's executor, connection provider and connection lock would add
// a dozen promise steps (more than the read itself) for nothing. The connection lock only matters
// while a transaction is open on the connection (`inTransaction`): then the read waits its turn
// through kysely as before, so it never sees another caller's uncommitted rows.
import type SQLite from 'better-sqlite3';
import { type Compilable, CompiledQuery, type Insertable, type InsertQueryBuilder, type InsertResult, type Kysely } from 'kysely';
import { sqliteConnectionOf } from './connection.js';
import { isPostgres } from './dialect.js';
import type { Database, Db } from './schema.js';

/** A parameter of a reusable query: build() gets these in place of the values. */
type Slot = { slot: number };

interface Compiled {
  sql: string;
  query: CompiledQuery['query'];
  /** Per parameter: the index of the value it takes, or the constant it keeps. */
  parameters: ({ slot: number } | { constant: unknown })[];
}

/**
 * `build(db, p0, p1, …)` must use each placeholder as a plain value (`where('id', '=', p0)`);
 * the returned function runs the compiled query with `values` in their place and answers its rows.
 */
export function reusableQuery<Row, V extends unknown[]>(build: (db: Kysely<Database>, ...placeholders: V) => Compilable<Row>) {
  const byDialect = new Map<boolean, Compiled>();
  const statements = new WeakMap<SQLite.Database, SQLite.Statement>();
  return async (db: Db, ...values: V): Promise<Row[]> => {
    const sqlite = sqliteConnectionOf(db);
    const postgres = sqlite ? false : isPostgres(db);
    let compiled = byDialect.get(postgres);
    if (!compiled) {
      const slots = values.map((_, i): Slot => ({ slot: i }));
      const q = build(db as Kysely<Database>, ...(slots as V)).compile();
      compiled = {
        sql: q.sql,
        query: q.query,
        parameters: q.parameters.map((p) => (isSlot(p, slots) ? { slot: (p as Slot).slot } : { constant: p })),
      };
      if (compiled.parameters.filter((p) => 'slot' in p).length !== values.length) {
        throw new Error(`reusableQuery: every placeholder must appear once as a parameter (${q.sql})`);
      }
      byDialect.set(postgres, compiled);
    }
    const parameters = compiled.parameters.map((p) => ('slot' in p ? values[p.slot] : p.constant));
    if (sqlite?.open && !sqlite.inTransaction) {
      let statement = statements.get(sqlite);
      if (!statement) {
        statement = sqlite.prepare(compiled.sql);
        if (!statement.reader) throw new Error(`reusableQuery: only reads run directly on SQLite (${compiled.sql})`);
        statements.set(sqlite, statement);
      }
      return statement.all(parameters) as Row[];
    }
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
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
