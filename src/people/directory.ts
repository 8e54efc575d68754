// Names and addresses of people by id, for features that show or match them.
import type { Db } from '../db/schema.js';

/** Id and sign-in address of each of these people (those that exist). */
export async function peopleEmails(db: Db, personIds: readonly string[]): Promise<{ id: string; email: string }[]> {
  if (personIds.length === 0) return [];
  return db
    .selectFrom('people')
    .select(['id', 'email'])
    .where('id', 'in', [...new Set(personIds)])
    .execute();
}

/** Person id → name (null when none is set), for these people. */
export async function peopleNames(db: Db, personIds: readonly (string | null)[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(personIds.filter((p): p is string => p !== null))];
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('people').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
