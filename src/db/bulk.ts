// Statements over many rows written as SQL text with placeholders, for hot paths where building
// the statement with the query builder (a node per value) costs more than running it.
import { CompiledQuery, type SelectQueryBuilder, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database, Db } from './schema.js';

/**
 * Statement texts by shape: callers cut their rows into a few batch sizes, so a handful of texts
 * serve every call and building them (thousands of placeholders) is done once.
 */
const statementTexts = new Map<string, string>();
const STATEMENT_TEXTS_KEPT = 256;

function cachedText(key: string, build: () => string): string {
  let text = statementTexts.get(key);
  if (text === undefined) {
    if (statementTexts.size >= STATEMENT_TEXTS_KEPT) statementTexts.clear();
    text = build();
    statementTexts.set(key, text);
  }
  return text;
}

/** Rows given as arrays, as one list of parameters in row order. */
function flatValues(rows: readonly unknown[][], into: unknown[] = []): unknown[] {
  for (const row of rows) for (let i = 0; i < row.length; i++) into.push(row[i]);
  return into;
}

/** "(?, ?), (?, ?)" or "($1, $2), ($3, $4)" for `rows` tuples of `width` values, numbered from `first`. */
function tuples(db: Db, rows: number, width: number, first = 1): string {
  const pg = isPostgres(db);
  let n = first;
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const one: string[] = [];
    for (let c = 0; c < width; c++) one.push(pg ? `$${n++}` : '?');
    out.push(`(${one.join(', ')})`);
  }
  return out.join(', ');
}

/** INSERT INTO table (columns) VALUES (…), (…) for rows given as arrays in column order. */
export async function insertRows(db: Db, table: string, columns: readonly string[], rows: readonly unknown[][]): Promise<void> {
  if (rows.length === 0) return;
  const text = cachedText(
    `insert|${isPostgres(db)}|${table}|${columns.join(',')}|${rows.length}`,
    () => `insert into ${table} (${columns.join(', ')}) values ${tuples(db, rows.length, columns.length)}`,
  );
  await db.executeQuery(CompiledQuery.raw(text, flatValues(rows)));
}

/**
 * UPDATE table SET <assignments> WHERE (key columns) IN ((…), …). `assignments` is SQL text whose
 * placeholders come first (pass their values in `values`; write them as "?" — they are numbered
 * for Postgres here).
 */
export async function updateByKeys(
  db: Db,
  table: string,
  assignments: string,
  values: readonly unknown[],
  keyColumns: readonly string[],
  keys: readonly unknown[][],
): Promise<void> {
  if (keys.length === 0) return;
  const text = cachedText(`update|${isPostgres(db)}|${table}|${assignments}|${keyColumns.join(',')}|${keys.length}`, () => {
    let n = 1;
    const set = isPostgres(db) ? assignments.replace(/\?/g, () => `$${n++}`) : assignments;
    return `update ${table} set ${set} where (${keyColumns.join(', ')}) in (${tuples(db, keys.length, keyColumns.length, values.length + 1)})`;
  });
  await db.executeQuery(CompiledQuery.raw(text, flatValues(keys, [...values])));
}

/**
 * UPDATE table SET <assignments> FROM (VALUES (…), …) AS v WHERE table.<key> = v.column1 … [AND <where>] for rows
 * that each carry their own values: the leading key columns (`keyColumns` of them, `table`'s names)
 * match, the assignments read the rest as v.column<n> (VALUES names its columns column1, column2, …
 * on both dialects). `types` are the Postgres types of the row's values, which parameters inside
 * VALUES do not get from a column. Placeholders in `assignments` are written "?" and come first.
 */
export async function updateFromValues(
  db: Db,
  table: string,
  statement: { assignments: string; values: readonly unknown[]; keyColumns: readonly string[]; types: readonly string[]; where?: string },
  rows: readonly unknown[][],
): Promise<void> {
  if (rows.length === 0) return;
  const { assignments, values, keyColumns, types, where } = statement;
  const pg = isPostgres(db);
  const text = cachedText(`values|${pg}|${table}|${assignments}|${types.join(',')}|${where}|${keyColumns.join(',')}|${rows.length}`, () => {
    let n = 1;
    const set = pg ? assignments.replace(/\?/g, () => `$${n++}`) : assignments;
    const row = () => `(${types.map((t) => (pg ? `$${n++}::${t}` : '?')).join(', ')})`;
    const list = Array.from({ length: rows.length }, row).join(', ');
    const match = keyColumns.map((c, i) => `${table}.${c} = v.column${i + 1}`).join(' and ');
    return `update ${table} set ${set} from (values ${list}) as v where ${match}${where ? ` and ${where}` : ''}`;
  });
  await db.executeQuery(CompiledQuery.raw(text, flatValues(rows, [...values])));
}

/**
 * Runs SQL text written with "?" placeholders (numbered for Postgres here), its text built once per
 * `key`: for hot statements whose building and compiling with the query builder costs more than
 * running them. The key must name everything the text depends on besides the dialect.
 */
export async function runText<R>(db: Db, key: string, build: () => string, params: readonly unknown[]): Promise<R[]> {
  const pg = isPostgres(db);
  const text = cachedText(`text|${pg}|${key}`, () => {
    const written = build();
    let n = 1;
    return pg ? written.replace(/\?/g, () => `$${n++}`) : written;
  });
  return (await db.executeQuery<R>(CompiledQuery.raw(text, params as unknown[]))).rows as R[];
}

/** "?, ?, ?" for an IN list of `count` values. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

/**
 * Deletes up to `batch` of the rows of `table` that `chosen` selects (it selects the `key` column),
 * in one statement: DELETE … WHERE key IN (chosen LIMIT batch). Returns how many were deleted.
 */
export async function deleteChosen<T extends keyof Database & string>(
  db: Db,
  table: T,
  key: keyof Database[T] & string,
  chosen: SelectQueryBuilder<Database, T, unknown>,
  batch: number,
): Promise<number> {
  const r = await sql`delete from ${sql.table(table)} where ${sql.ref(key)} in (${chosen.limit(batch)})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
