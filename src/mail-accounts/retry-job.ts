// After a new sign-in (./sign-in.ts stores this job with the grant): what the refused sign-in
// failed is sent again: the replies, each with a fresh set of attempts (src/mail/outbound.ts), and
// the rating requests whose links still work (a new `rating.request` job each). A broadcast it
// paused waits for a member to resume it (src/broadcasts/sender.ts says why).
import type { Ctx } from '../context.js';
import { failedRepliesOfChannel, messageById } from '../conversations/store.js';
import { retryFailedReply } from '../mail/outbound.js';
import type { JobKind } from '../platform/jobs.js';
import { retryRatingRequestsOfChannel } from '../ratings/service.js';
import { SIGN_IN_FAILURE_MARK } from './grants.js';
import { RETRY_REPLIES_JOB } from './sign-in.js';

/** After a new sign-in: every reply and live rating request of the channel that the refused sign-in failed is sent again. */
export function retryRepliesJob(ctx: Ctx): JobKind<{ channelId: string }> {
  return {
    kind: RETRY_REPLIES_JOB,
    async run({ channelId }) {
      const ids = await failedRepliesOfChannel(ctx.db, channelId, `%${SIGN_IN_FAILURE_MARK}%`);
      for (const id of ids) {
        const message = await messageById(ctx.db, id);
        if (message?.delivery_status === 'failed') await retryFailedReply(ctx, message);
      }
      const ratings = await retryRatingRequestsOfChannel(ctx, channelId, `%${SIGN_IN_FAILURE_MARK}%`);
      if (ids.length || ratings) ctx.log.info('mail sent again after a new sign-in', { channel_id: channelId, replies: ids.length, rating_requests: ratings });
    },
  };
}
