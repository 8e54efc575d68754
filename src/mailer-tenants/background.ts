// The tenant feature's part of `svc serve`: upkeep after channel saves (stored by the channel's
// transaction, src/mailer-tenants/reaction.ts), status reads every five minutes, re-reads after
// tenant events. Nothing here writes to the provider at startup: only a save, an approval or the
// sync command leads to a write.
import type { BackgroundPart } from '../platform/background.js';
import { mailerProvider } from './provider.js';
import { mailerOnSince, mailerTenantJobs } from './service.js';

export const mailerTenantsBackground: BackgroundPart = {
  name: 'mailer-tenants',
  jobs: (ctx) => mailerTenantJobs(ctx),
  async start(ctx) {
    // Records whether the feature is on (and since when): a channel save queued while it was off is then not acted on.
    await mailerOnSince(ctx);
    if (!ctx.config.mailer) return;
    return {
      async stop() {
        mailerProvider(ctx)?.close();
      },
    };
  },
};
