// Whether someone of the team is connected now (the widget shows it to visitors).
import type { Db } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { CONNECTION_STALE_MS } from './connections.js';

/** True when a member of the workspace has an open connection seen within CONNECTION_STALE_MS of `now`. */
export async function teamOnline(db: Db, workspaceId: string, now: Date): Promise<boolean> {
  const member = await db
    .selectFrom('realtime_connections')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'member')
    .where('closed_at', 'is', null)
    .where('last_seen_at', '>=', iso(now.getTime() - CONNECTION_STALE_MS))
    .limit(1)
    .executeTakeFirst();
  return member !== undefined;
}

/** Of these members, those with an open panel connection seen within CONNECTION_STALE_MS of `now`. */
export async function onlineMembers(db: Db, workspaceId: string, personIds: readonly string[], now: Date): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('realtime_connections')
    .select('subject_id')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'member')
    .where('subject_id', 'in', personIds)
    .where('closed_at', 'is', null)
    .where('last_seen_at', '>=', iso(now.getTime() - CONNECTION_STALE_MS))
    .execute();
  return new Set(rows.map((r) => r.subject_id));
}
