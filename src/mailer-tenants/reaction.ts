// The tenant upkeep reaction (src/events/registry.ts): a saved channel stores a job in the saving
// transaction. The job (`mailer.channel_saved`, run by the server) decides whether the channel
// sends, or sent until now, through the SES endpoint and then queues the inbox's tenant upkeep.
import type { Reaction } from '../events/reaction-types.js';
import { iso } from '../platform/clock.js';
import { enqueue } from '../platform/jobs.js';

export const CHANNEL_SAVED_JOB = 'mailer.channel_saved';

/** The job's payload: the signal, and when the channel was saved (see mailerOnSince: a save from before the feature was on is not acted on). */
export type ChannelSavedJob = { channelId: string; former?: { inboxId: string; smtpHost: string | null }; saved_at?: string };

export const tenantUpkeepReaction: Reaction = {
  name: 'tenant_upkeep',
  signals: {
    async 'channel.saved'(tx, signal) {
      const payload: ChannelSavedJob = { ...signal, saved_at: iso(tx.clock.now()) };
      await enqueue(tx.db, tx.clock, { kind: CHANNEL_SAVED_JOB, payload });
    },
  },
};
