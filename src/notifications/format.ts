// What the API shows of notification preferences, and its response schema.
import { z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import { NOTIFICATION_CHANNELS, NOTIFICATION_TRIGGERS, type NotificationPreferences } from './preferences.js';

const ChannelSwitches = z.object(
  Object.fromEntries(NOTIFICATION_CHANNELS.map((c) => [c, z.boolean()])) as Record<(typeof NOTIFICATION_CHANNELS)[number], z.ZodBoolean>,
);

export const NotificationPreferencesSchema = z
  .object({
    preferences: z
      .object(
        Object.fromEntries(NOTIFICATION_TRIGGERS.map((t) => [t, ChannelSwitches])) as Record<(typeof NOTIFICATION_TRIGGERS)[number], typeof ChannelSwitches>,
      )
      .openapi({
        description:
          'per trigger (new_conversation, assigned, customer_reply, mention, snooze_ended, sla_warning, sla_breached, reply_held, sign_in_required): realtime (open panels), push (Web Push), email (batched mail)',
      }),
    available: z
      .object({ realtime: z.boolean(), push: z.boolean(), email: z.boolean() })
      .openapi({ description: 'whether the server can use each channel: push needs SVC_VAPID_*, email needs SVC_SMTP_*' }),
  })
  .openapi('NotificationPreferences');

export function formatPreferences(config: Ctx['config'], preferences: NotificationPreferences) {
  return { preferences, available: { realtime: true, push: !!config.vapid, email: !!config.smtp } };
}

export const NotificationSchema = z
  .object({
    id: z.string(),
    trigger: z.enum(NOTIFICATION_TRIGGERS),
    conversation_id: z.string().nullable().openapi({ description: 'the conversation it is about; null for a notification about a channel' }),
    channel_id: z
      .string()
      .nullable()
      .openapi({ description: 'the channel it is about when there is no conversation (sign_in_required from the mailbox reader)' }),
    inbox_id: z.string().nullable().openapi({ description: 'the conversation’s (or channel’s) inbox now' }),
    title: z.string(),
    body: z.string(),
    url: z.string().openapi({ description: 'the conversation in the panel, or the settings of the channel’s inbox' }),
    created_at: z.string(),
    read_at: z.string().nullable().openapi({ description: 'when the member read it; null while unread' }),
  })
  .openapi('Notification');
