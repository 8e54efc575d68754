// Following merges: a merged contact's sessions and references move to the contact it went into.
import type { Db } from '../db/schema.js';

/** The contact's id and the contact it was merged into (null when not merged); undefined when there is none. */
export async function contactMergeState(db: Db, contactId: string): Promise<{ id: string; merged_into_id: string | null } | undefined> {
  return db.selectFrom('contacts').select(['id', 'merged_into_id']).where('id', '=', contactId).executeTakeFirst();
}

/** The contact and every contact merged into it: the ids a contact's older messages may carry. */
export async function contactIdsMergedInto(db: Db, contactId: string): Promise<string[]> {
  const merged = await db.selectFrom('contacts').select('id').where('merged_into_id', '=', contactId).execute();
  return [contactId, ...merged.map((r) => r.id)];
}
