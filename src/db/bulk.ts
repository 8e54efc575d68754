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

/** "(?, ?), (?, ?)" for `rows` tuples of `width` values (SQLite; Postgres takes arrays). */
function tuples(rows: number, width: number): string {
  const one = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => one).join(', ');
}

/** Rows per multi-row statement on SQLite at most; rows go in chunks of this, then 64, 32, … 1, so that few statement texts (each prepared once) serve every number of rows. */
export const STATEMENT_ROWS = 128;

/** `rows` in chunks of STATEMENT_ROWS, then 64, 32, … 1: at most eight statement texts for any number of rows. */
export function statementChunks<T>(rows: readonly T[]): T[][] {
  if (rows.length <= STATEMENT_ROWS && (rows.length & (rows.length - 1)) === 0) return rows.length ? [rows as T[]] : [];
  const chunks: T[][] = [];
  let at = 0;
  for (let size = STATEMENT_ROWS; size >= 1; size >>= 1) {
    while (rows.length - at >= size) {
      chunks.push(rows.slice(at, at + size));
      at += size;
    }
  }
  return chunks;
}

/**
 * On Postgres, rows go as one array parameter per column, spread by unnest(): one statement (one
 * round trip, one text) for any number of rows. `types` are the columns' Postgres types.
 */
function unnestFrom(types: readonly string[], first: number): string {
  return `unnest(${types.map((t, i) => `$${first + i}::${t}[]`).join(', ')})`;
}

function columnArrays(rows: readonly unknown[][], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => new Array(rows.length));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let c = 0; c < width; c++) columns[c]![r] = row[c];
  }
  return columns;
}

/**
 * INSERT INTO table (columns) … for rows given as arrays in column order: on SQLite VALUES (…), (…)
 * in chunks (statementChunks), on Postgres one statement over unnest() of one array per column
 * (`types`: the columns' Postgres types).
 */
export async function insertRows(db: Db, table: string, columns: readonly string[], rows: readonly unknown[][], types: readonly string[]): Promise<void> {
  if (rows.length === 0) return;
  if (isPostgres(db)) {
    const text = cachedText(
      `insert|unnest|${table}|${columns.join(',')}|${types.join(',')}`,
      () => `insert into ${table} (${columns.join(', ')}) select * from ${unnestFrom(types, 1)}`,
    );
    await db.executeQuery(CompiledQuery.raw(text, columnArrays(rows, columns.length)));
    return;
  }
  for (const chunk of statementChunks(rows)) {
    const text = cachedText(
      `insert|false|${table}|${columns.join(',')}|${chunk.length}`,
      () => `insert into ${table} (${columns.join(', ')}) values ${tuples(chunk.length, columns.length)}`,
    );
    await db.executeQuery(CompiledQuery.raw(text, flatValues(chunk)));
  }
}

/**
 * UPDATE table SET <assignments> WHERE (key columns) IN ((…), …), in chunks on SQLite; on Postgres
 * one statement joining unnest() of one array per key column (`keyTypes`). `assignments` is SQL
 * text whose placeholders come first (pass their values in `values`; write them as "?" — they are
 * numbered for Postgres here).
 */
export async function updateByKeys(
  db: Db,
  table: string,
  statement: { assignments: string; values: readonly unknown[]; keyColumns: readonly string[]; keyTypes: readonly string[] },
  keys: readonly unknown[][],
): Promise<void> {
  if (keys.length === 0) return;
  const { assignments, values, keyColumns, keyTypes } = statement;
  if (isPostgres(db)) {
    const text = cachedText(`update|unnest|${table}|${assignments}|${keyColumns.join(',')}|${keyTypes.join(',')}`, () => {
      let n = 1;
      const set = assignments.replace(/\?/g, () => `$${n++}`);
      const names = keyColumns.map((_, i) => `key${i + 1}`);
      const match = keyColumns.map((c, i) => `${table}.${c} = k.${names[i]}`).join(' and ');
      return `update ${table} set ${set} from ${unnestFrom(keyTypes, n)} as k(${names.join(', ')}) where ${match}`;
    });
    await db.executeQuery(CompiledQuery.raw(text, [...values, ...columnArrays(keys, keyColumns.length)]));
    return;
  }
  for (const chunk of statementChunks(keys)) {
    const text = cachedText(
      `update|false|${table}|${assignments}|${keyColumns.join(',')}|${chunk.length}`,
      () => `update ${table} set ${assignments} where (${keyColumns.join(', ')}) in (${tuples(chunk.length, keyColumns.length)})`,
    );
    await db.executeQuery(CompiledQuery.raw(text, flatValues(chunk, [...values])));
  }
}

/**
 * UPDATE table SET <assignments> FROM (VALUES (…), …) AS v WHERE table.<key> = v.column1 … [AND <where>] for rows
 * that each carry their own values: the leading key columns (`keyColumns` of them, `table`'s names)
 * match, the assignments read the rest as v.column<n> (VALUES names its columns column1, column2, …
 * on SQLite; on Postgres the rows come from unnest() of one array per column, named the same).
 * `types` are the Postgres types of the row's values. Placeholders in `assignments` are written "?"
 * and come first. SQLite takes the rows in chunks, Postgres in one statement.
 */
export async function updateFromValues(
  db: Db,
  table: string,
  statement: { assignments: string; values: readonly unknown[]; keyColumns: readonly string[]; types: readonly string[]; where?: string },
  rows: readonly unknown[][],
): Promise<void> {
  if (rows.length === 0) return;
  const { assignments, values, keyColumns, types, where } = statement;
  const match = keyColumns.map((c, i) => `${table}.${c} = v.column${i + 1}`).join(' and ');
  if (isPostgres(db)) {
    const text = cachedText(`values|unnest|${table}|${assignments}|${types.join(',')}|${where}|${keyColumns.join(',')}`, () => {
      let n = 1;
      const set = assignments.replace(/\?/g, () => `$${n++}`);
      const names = types.map((_, i) => `column${i + 1}`).join(', ');
      return `update ${table} set ${set} from ${unnestFrom(types, n)} as v(${names}) where ${match}${where ? ` and ${where}` : ''}`;
    });
    await db.executeQuery(CompiledQuery.raw(text, [...values, ...columnArrays(rows, types.length)]));
    return;
  }
  for (const chunk of statementChunks(rows)) {
    const text = cachedText(`values|false|${table}|${assignments}|${types.length}|${where}|${keyColumns.join(',')}|${chunk.length}`, () => {
      const row = `(${types.map(() => '?').join(', ')})`;
      const list = Array.from({ length: chunk.length }, () => row).join(', ');
      return `update ${table} set ${assignments} from (values ${list}) as v where ${match}${where ? ` and ${where}` : ''}`;
    });
    await db.executeQuery(CompiledQuery.raw(text, flatValues(chunk, [...values])));
  }
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
