// The signed-in person's notification preferences.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requirePerson } from '../http/auth.js';
import { bearer, jsonAnswer, jsonBody } from '../http/openapi.js';
import { formatPreferences, NotificationPreferencesSchema } from './format.js';
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

export function registerNotificationRoutes(app: ApiApp, ctx: Ctx) {
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
