// Reads of people for other features: they use these instead of querying the people table
// themselves. Imports no feature, so any may use it.
import type { Db, PeopleTable } from '../db/schema.js';

/** The people with these ids, by id, in one query (ids that name nobody are left out). */
export async function peopleByIds(db: Db, personIds: readonly string[]): Promise<Map<string, PeopleTable>> {
  if (personIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('people')
    .selectAll()
    .where('id', 'in', [...new Set(personIds)])
    .execute();
  return new Map(rows.map((p) => [p.id, p]));
}
