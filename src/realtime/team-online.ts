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
