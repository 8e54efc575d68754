// The webhook part of the server: the outbox dispatcher and the hourly clean-up of finished
// deliveries and expired events.
import type { Ctx } from '../context.js';
import { pruneEvents } from '../events/service.js';
import { deleteStaleConnections } from '../realtime/connections.js';
import { HOUR } from '../platform/clock.js';
import type { BackgroundPart } from '../server/background.js';
import { WebhookDispatcher } from './dispatcher.js';
import { pruneDeliveries } from './service.js';

export const webhooksBackground: BackgroundPart = {
  name: 'webhooks',
  jobs: (ctx: Ctx) => [
    // The same rules are in src/lifecycle/registry.ts; this job runs them until the shared hourly
    // retention job does (then it goes).
    {
      kind: 'webhooks.prune',
      everyMs: HOUR,
      async run() {
        // Deliveries first: events that no kept delivery refers to any more can then go.
        const deliveries = await pruneDeliveries(ctx);
        const events = await pruneEvents(ctx);
        let connections = 0;
        for (;;) {
          const n = await deleteStaleConnections(ctx);
          connections += n;
          if (n === 0) break;
        }
        ctx.log.info('events pruned', {
          deliveries_deleted: deliveries,
          events_deleted: events.deleted,
          pruned_through: events.prunedThrough,
          connections_deleted: connections,
        });
      },
    },
  ],
  async start(ctx: Ctx) {
    const dispatcher = new WebhookDispatcher(ctx);
    await dispatcher.start();
    ctx.jobs.addDrainable(dispatcher);
    return { stop: () => dispatcher.stop() };
  },
};
