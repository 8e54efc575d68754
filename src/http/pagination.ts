// Lists: ?limit= (default 50, max 200) and ?cursor= (opaque); answer {"data":[…],"next_cursor":…|null}.
import { z } from '@hono/zod-openapi';
import { invalid } from '../platform/errors.js';

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).optional().openapi({ description: 'page size, 1 to 200 (default 50)' }),
  cursor: z.string().max(500).optional().openapi({ description: 'next_cursor of the previous page' }),
});

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

export const pageSchema = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() });
