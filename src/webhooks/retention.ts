// Retention of the webhook delivery log, and a deleted workspace's endpoints.
import type { RetentionRule, WorkspaceDataStep } from '../lifecycle/registry.js';
import { pruneDeliveriesBatch } from './service.js';

/** Finished deliveries after 7 days, except the newest 100 of each endpoint. */
export const webhookDeliveriesRule: RetentionRule = {
  name: 'webhook_deliveries',
  deleteBatch: (ctx, now, batch) => pruneDeliveriesBatch(ctx, now, batch),
};

/**
 * A deleted workspace's endpoints (disabled when the deletion was asked for). Their deliveries went
 * with the workspace's events in the step before; any left (a late commit) go here first.
 */
export const workspaceWebhookEndpointsStep: WorkspaceDataStep = {
  name: 'webhook_endpoints',
  async deleteBatch(ctx, workspaceId) {
    const endpoint = await ctx.db.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', workspaceId).orderBy('id').limit(1).executeTakeFirst();
    if (!endpoint) return { rows: 0, files: 0 };
    // One endpoint per batch: the outbox has no index by endpoint, so each costs one scan of it.
    const rows = await ctx.db.transaction().execute(async (trx) => {
      const attempts = await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', endpoint.id).executeTakeFirst();
      const deliveries = await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpoint.id).executeTakeFirst();
      await trx.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
      return Number(attempts.numDeletedRows) + Number(deliveries.numDeletedRows) + 1;
    });
    return { rows, files: 0 };
  },
};
