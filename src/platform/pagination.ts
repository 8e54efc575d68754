// Cursor pages for services: ?cursor= is opaque base64url JSON, and a page is {"data":[…],"next_cursor":…|null}.
// The query and page schemas the routes declare stay in src/http/pagination.ts.
import type { z } from 'zod';
import { invalid } from './errors.js';

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined, shape: z.ZodType<T>): T | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    return shape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw invalid('cursor is not valid');
  }
}

/** Rows were fetched with limit + 1: trims the extra row and turns the last kept row into the cursor. */
export function toPage<Row, Out>(rows: Row[], limit: number, cursorOf: (row: Row) => unknown, format: (row: Row) => Out) {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return {
    data: kept.map(format),
    next_cursor: more ? encodeCursor(cursorOf(kept[kept.length - 1])) : null,
  };
}

/**
 * toPage for rows keyed by id (the cursor): `load` first reads, in one go, what the kept rows need
 * to be shown (given their ids); `format` then shows each row with it.
 */
export async function toPageById<Row extends { id: string }, Loaded, Out>(
  rows: Row[],
  limit: number,
  load: (ids: string[]) => Promise<Loaded>,
  format: (row: Row, loaded: Loaded) => Out,
) {
  const loaded = await load(rows.slice(0, limit).map((r) => r.id));
  return toPage(
    rows,
    limit,
    (r) => ({ id: r.id }),
    (r) => format(r, loaded),
  );
}
