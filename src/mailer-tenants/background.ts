// The tenant feature's part of `svc serve`: upkeep after channel saves, status reads every five
// minutes, re-reads after tenant events. Nothing here writes to the provider at startup: only a
// save, an approval or the sync command leads to a write.
import type { BackgroundPart } from '../server/background.js';
import { mailerProvider } from './provider.js';
import { channelSaved, mailerTenantJobs, type ChannelSavedSignal } from './service.js';

export const mailerTenantsBackground: BackgroundPart = {
  name: 'mailer-tenants',
  jobs: (ctx) => mailerTenantJobs(ctx),
  async start(ctx) {
    if (!ctx.config.mailer) return;
    const onSaved = ({ channelId, former }: ChannelSavedSignal) => {
      channelSaved(ctx, channelId, former).then(
        () => ctx.jobs.wake(),
        (error) => ctx.log.error('mailer tenant upkeep not queued', { channel_id: channelId, error }),
      );
    };
    ctx.hub.on('channel.saved', onSaved);
    return {
      async stop() {
        ctx.hub.off('channel.saved', onSaved);
        mailerProvider(ctx)?.close();
      },
    };
  },
};
