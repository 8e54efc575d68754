// Retention of live-connection records: stale ones (closed or silent) are kept one hour.
import type { RetentionRule, WorkspaceDataStep } from '../lifecycle/registry.js';
import { iso } from '../platform/clock.js';
import { STALE_CONNECTION_KEEP_MS } from './connections.js';

export const staleConnectionsRule: RetentionRule = {
  name: 'realtime_connections',
  async deleteBatch(ctx, now, batch) {
    // A live connection's heartbeat keeps last_seen_at fresh; anything not seen for an hour is stale.
    const cutoff = iso(now.getTime() - STALE_CONNECTION_KEEP_MS);
    const r = await ctx.db
      .deleteFrom('realtime_connections')
      .where('id', 'in', (eb) => eb.selectFrom('realtime_connections as c').select('c.id').where('c.last_seen_at', '<', cutoff).limit(batch))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },
};

export const workspaceConnectionsStep: WorkspaceDataStep = {
  name: 'realtime_connections',
  async deleteBatch(ctx, workspaceId, batch) {
    const r = await ctx.db
      .deleteFrom('realtime_connections')
      .where('id', 'in', (eb) => eb.selectFrom('realtime_connections as c').select('c.id').where('c.workspace_id', '=', workspaceId).limit(batch))
      .executeTakeFirst();
    return { rows: Number(r.numDeletedRows), files: 0 };
  },
};

