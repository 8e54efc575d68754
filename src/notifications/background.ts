// The notifications' part of `svc serve`: the jobs that the reaction and ./service.ts store.
import type { Ctx } from '../context.js';
import type { BackgroundPart } from '../platform/background.js';
import type { JobKind } from '../platform/jobs.js';
import { sendPush } from '../push/send.js';
import { dropPushSubscription, findPushSubscription } from '../push/service.js';
import { sendNotificationMail } from './mail.js';
import { NOTIFY_EVENT_JOB, type NotifyEventPayload } from './reaction.js';
import { MAIL_JOB, notifyEvent, notifyEvents, PUSH_JOB, type PushJobPayload, pushStillSeen } from './service.js';

function notificationJobs(ctx: Ctx): JobKind[] {
  return [
    {
      kind: NOTIFY_EVENT_JOB,
      async run(payload: NotifyEventPayload) {
        await notifyEvent(ctx, payload);
      },
      // Under inbound mail these come one per new conversation: claimed, told and removed together
      // (the removal in the transaction that stores the notifications).
      async runBatch(jobs: { payload: NotifyEventPayload }[], done) {
        await notifyEvents(
          ctx,
          jobs.map((j) => j.payload),
          { alsoInTransaction: done },
        );
      },
    },
    {
      kind: PUSH_JOB,
      async run(payload: PushJobPayload) {
        const sub = await findPushSubscription(ctx, payload.subscription_id);
        if (!sub || !ctx.config.vapid) return;
        // Queued when the member was told; sent only if they would still be shown it now.
        if (!(await pushStillSeen(ctx, payload.notification_id))) {
          ctx.log.info('push not sent: the member no longer sees the conversation', { notification_id: payload.notification_id, person_id: sub.person_id });
          return;
        }
        const outcome = await sendPush(ctx, sub, { ...payload.message }, { urgency: 'high' });
        if (outcome === 'gone') {
          await dropPushSubscription(ctx, sub.id);
          ctx.log.info('push subscription removed: the push service says it is gone', { subscription_id: sub.id, person_id: sub.person_id });
        }
      },
    },
    {
      kind: MAIL_JOB,
      async run(payload: { person_id: string }) {
        return sendNotificationMail(ctx, payload.person_id);
      },
    },
  ];
}

export const notificationsBackground: BackgroundPart = {
  name: 'notifications',
  jobs: notificationJobs,
};
