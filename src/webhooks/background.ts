// The webhook part of the server: the outbox dispatcher and the hourly clean-up of finished
// deliveries and expired events.
import type { Ctx } from '../context.js';
import { pruneEvents } from '../events/service.js';
import { HOUR } from '../platform/clock.js';
import type { BackgroundPart } from '../server/background.js';
import { WebhookDispatcher } from './dispatcher.js';
import { pruneDeliveries } from './service.js';

export const webhooksBackground: BackgroundPart = {
  name: 'webhooks',
  jobs: (ctx: Ctx) => [
    {
      kind: 'webhooks.prune',
      everyMs: HOUR,
      async run() {
        // Deliveries first: events that no kept delivery refers to any more can then go.
        const deliveries = await pruneDeliveries(ctx);
        const events = await pruneEvents(ctx);
        ctx.log.info('events pruned', { deliveries_deleted: deliveries, events_deleted: events.deleted, pruned_through: events.prunedThrough });
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
