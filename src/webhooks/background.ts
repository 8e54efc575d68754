// The webhook part of the server: the outbox dispatcher. Finished deliveries and expired events are
// removed by the hourly retention job (src/lifecycle, rules in ./retention.ts and ../events/retention.ts).
import type { Ctx } from '../context.js';
import type { BackgroundPart } from '../platform/background.js';
import { WebhookDispatcher } from './dispatcher.js';
import { observeOutbox } from './outbox.js';

export const webhooksBackground: BackgroundPart = {
  name: 'webhooks',
  async start(ctx: Ctx) {
    observeOutbox(ctx);
    const dispatcher = new WebhookDispatcher(ctx);
    await dispatcher.start();
    ctx.jobs.addDrainable(dispatcher);
    return { stop: () => dispatcher.stop() };
  },
};
