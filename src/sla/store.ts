// SLA's read model for reports (src/reports): how targets ended in a period.
import { readRows } from '../db/readers.js';
import type { Db, SlaTarget } from '../db/schema.js';

/** The outcomes counted on days from..to (UTC), of these inboxes (null: all), optionally one member. */
export async function slaOutcomesIn(
  db: Db,
  q: { workspaceId: string; from: string; to: string; inboxIds: readonly string[] | null; memberId?: string },
): Promise<{ target: SlaTarget; outcome: 'met' | 'breached'; inbox_id: string; member_id: string }[]> {
  let query = db
    .selectFrom('sla_outcomes')
    .select(['target', 'outcome', 'inbox_id', 'member_id'])
    .where('workspace_id', '=', q.workspaceId)
    .where('day', '>=', q.from)
    .where('day', '<=', q.to);
  if (q.inboxIds !== null) query = q.inboxIds.length ? query.where('inbox_id', 'in', [...q.inboxIds]) : query.where('inbox_id', '=', '');
  if (q.memberId) query = query.where('member_id', '=', q.memberId);
  // A year of a busy workspace's outcomes: off the event loop on SQLite (src/db/readers.ts).
  return readRows(db, query);
}
