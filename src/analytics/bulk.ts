// Many rows in one statement. On Postgres as one array per column (`insert … select * from
// unnest($1::text[], …)`): a few parameters instead of one per value, so neither the driver nor
// the server handles thousands of placeholders per batch (issue 39, bench/analytics: most of a
// batch's cost on Postgres was parsing and binding the VALUES lists). On SQLite plain VALUES lists.
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import type { Db } from '../db/schema.js';

const SQLITE_ROWS = 500;

/** Inserts `rows` into `table`; `tail` follows (on conflict …, returning …); the rows each statement returned. */
export async function insertRows<R extends object, Out = unknown>(
  db: Db,
  table: string,
  rows: readonly R[],
  columns: Record<keyof R & string, 'text' | 'integer'>,
  tail: RawBuilder<unknown> = sql``,
): Promise<Out[]> {
  if (!rows.length) return [];
  const names = Object.keys(columns) as (keyof R & string)[];
  const head = sql`insert into ${sql.table(table)} (${sql.join(names.map((c) => sql.ref(c)))})`;
  if (isPostgres(db)) {
    const arrays = names.map((c) => sql`${rows.map((r) => r[c] ?? null)}::${sql.raw(columns[c])}[]`);
    return (await sql<Out>`${head} select * from unnest(${sql.join(arrays)}) ${tail}`.execute(db)).rows;
  }
  // The statement's text made here: building it from a query-builder node per value cost more than SQLite's writing.
  const start = `insert into "${table}" (${names.map((c) => `"${c}"`).join(', ')}) values `;
  const row = `(${names.map(() => '?').join(', ')})`;
  const end = tail.compile(db).sql;
  const out: Out[] = [];
  for (let i = 0; i < rows.length; i += SQLITE_ROWS) {
    const chunk = rows.slice(i, i + SQLITE_ROWS);
    const params: unknown[] = [];
    for (const r of chunk) for (const c of names) params.push(r[c] ?? null);
    out.push(...(await db.executeQuery<Out>(CompiledQuery.raw(`${start}${chunk.map(() => row).join(', ')} ${end}`, params))).rows);
  }
  return out;
}
