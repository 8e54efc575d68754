// Queries on the request path that are built and compiled once per dialect and then run with new
// parameter values: kysely otherwise builds the operation tree and compiles it to SQL on every call,
// which costs more than running a small query on SQLite. The SQL text is the same string each time,
// so SQLite's statement cache (src/db/connection.ts) finds its prepared statement at once.
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
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
  return async (db: Db, ...values: V): Promise<Row[]> => {
    const postgres = isPostgres(db);
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
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
}

function isSlot(value: unknown, slots: Slot[]): boolean {
  return slots.includes(value as Slot);
}
