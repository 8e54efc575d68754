// The signed-in person's notifications (the inbox under the bell) and notification preferences.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess, requirePerson } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { listQuery } from '../http/pagination.js';
import { decodeCursor } from '../platform/pagination.js';
import { formatPreferences, NotificationPreferencesSchema, NotificationSchema } from './format.js';
import { listNotifications, markAllNotificationsRead, markNotificationRead } from './inbox.js';
import { getPreferences, NOTIFICATION_CHANNELS, NOTIFICATION_TRIGGERS, updatePreferences } from './preferences.js';

const SwitchesPatch = z
  .object(
    Object.fromEntries(NOTIFICATION_CHANNELS.map((c) => [c, z.boolean().optional()])) as Record<
      (typeof NOTIFICATION_CHANNELS)[number],
      z.ZodOptional<z.ZodBoolean>
    >,
  )
  .strict();
const PreferencesPatch = z
  .object(
    Object.fromEntries(NOTIFICATION_TRIGGERS.map((t) => [t, SwitchesPatch.optional()])) as Record<
      (typeof NOTIFICATION_TRIGGERS)[number],
      z.ZodOptional<typeof SwitchesPatch>
    >,
  )
  .strict()
  .openapi({ description: 'only the switches to change, e.g. {"new_conversation":{"email":true}}' });

const tags = ['notifications'];

const UnreadCount = z.number().int().openapi({ description: 'unread notifications of the signed-in member in this workspace' });

export function registerNotificationRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/notifications',
      tags,
      summary: 'The signed-in member’s notifications in this workspace, newest first, with the unread count (kept 30 days)',
      security: bearer,
      request: {
        query: listQuery.extend({
          unread: z.enum(['true', 'false']).optional().openapi({ description: 'true: only unread; false: only read; absent: all' }),
        }),
      },
      responses: {
        200: jsonAnswer(
          z.object({ data: z.array(NotificationSchema), next_cursor: z.string().nullable(), unread_count: UnreadCount }).openapi('NotificationPage'),
          'a page of notifications',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const q = c.req.valid('query');
      const cursor = decodeCursor(q.cursor, z.object({ before: z.string().max(100) }));
      const unread = q.unread === undefined ? undefined : q.unread === 'true';
      return c.json(await listNotifications(ctx, access, { unread, limit: q.limit ?? 50, before: cursor?.before }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/notifications/{id}/read',
      tags,
      summary: 'Mark one notification read (on every device of the member at once)',
      security: bearer,
      request: { params: z.object({ id: idParam('id', 'ntf_…') }) },
      responses: {
        200: jsonAnswer(z.object({ notification: NotificationSchema, unread_count: UnreadCount }), 'the notification, read, and what stays unread'),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(await markNotificationRead(ctx, access, c.req.valid('param').id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/notifications/read',
      tags,
      summary: 'Mark every notification of the signed-in member in this workspace read',
      security: bearer,
      responses: {
        200: jsonAnswer(z.object({ marked: z.number().int(), unread_count: UnreadCount }), 'how many were marked read'),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(await markAllNotificationsRead(ctx, access), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me/notification-preferences',
      tags,
      summary: 'What notifies the signed-in person, and how',
      security: bearer,
      responses: { 200: jsonAnswer(NotificationPreferencesSchema, 'the preferences (defaults until changed)') },
    }),
    async (c) => {
      const p = await requirePerson(c, ctx);
      return c.json(formatPreferences(ctx.config, await getPreferences(ctx, p.personId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/me/notification-preferences',
      tags,
      summary: 'Switch notifications by trigger and channel',
      security: bearer,
      request: { body: jsonBody(PreferencesPatch) },
      responses: { 200: jsonAnswer(NotificationPreferencesSchema, 'the preferences after the change') },
    }),
    async (c) => {
      const p = await requirePerson(c, ctx);
      return c.json(formatPreferences(ctx.config, await updatePreferences(ctx, p.personId, c.req.valid('json'))), 200);
    },
  );
}
