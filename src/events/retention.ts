// Retention of the stored event stream, and a deleted workspace's events (with their webhook deliveries).
import type { RetentionRule, WorkspaceDataStep } from '../lifecycle/registry.js';
import { pruneEventsBatch } from './service.js';

/** Replay events past SVC_EVENTS_RETENTION_DAYS (those a kept webhook delivery refers to stay). */
export const eventsRule: RetentionRule = {
  name: 'events',
  async deleteBatch(ctx, now, batch) {
    return (await pruneEventsBatch(ctx, now, batch)).deleted;
  },
};

/**
 * A deleted workspace's events, each with its webhook deliveries and their attempts (found through
 * the event: the outbox has no index by workspace).
 */
export const workspaceEventsStep: WorkspaceDataStep = {
  name: 'events',
  async deleteBatch(ctx, workspaceId, batch) {
    const seqs = (await ctx.db.selectFrom('events').select('seq').where('workspace_id', '=', workspaceId).orderBy('seq').limit(batch).execute()).map((r) => Number(r.seq));
    if (seqs.length === 0) return { rows: 0, files: 0 };
    const rows = await ctx.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_attempts').where('event_seq', 'in', seqs).execute();
      await trx.deleteFrom('webhook_deliveries').where('event_seq', 'in', seqs).execute();
      const r = await trx.deleteFrom('events').where('seq', 'in', seqs).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    return { rows, files: 0 };
  },
};
