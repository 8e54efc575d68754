// A signed-in person's Web Push subscriptions: register (the browser's PushSubscription), list, remove.
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { requirePerson } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { formatPushSubscription, listPushSubscriptions, PUSH_ENDPOINT_MAX_LENGTH, registerPushSubscription, removePushSubscription } from './service.js';

export const PushSubscriptionSchema = z
  .object({
    id: z.string(),
    endpoint: z.string(),
    expiration_time: z.string().nullable(),
    user_agent: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('PushSubscription');

const SubscriptionBody = z
  .object({
    endpoint: z.string().min(1).max(PUSH_ENDPOINT_MAX_LENGTH).openapi({ description: 'the push service URL of PushSubscription (https)' }),
    keys: z
      .object({ p256dh: z.string().min(1).max(200), auth: z.string().min(1).max(100) })
      .strict()
      .openapi({ description: 'PushSubscription keys, base64url' }),
    expiration_time: z.number().int().nullable().optional().openapi({ description: 'PushSubscription expirationTime (milliseconds since 1970) or null' }),
    user_agent: z.string().max(1000).nullable().optional().openapi({ description: 'a label for the browser, shown in the list' }),
  })
  .strict();

const tags = ['push'];

export function registerPushRoutes(app: ApiApp, ctx: Ctx) {
  const person = (c: Context<AppEnv>) => requirePerson(c, ctx);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/push/key',
      tags,
      summary: 'The server’s VAPID public key (applicationServerKey for PushManager.subscribe)',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ enabled: z.boolean(), vapid_public_key: z.string().nullable() }), 'null when Web Push is off') },
    }),
    async (c) => {
      await person(c);
      return c.json({ enabled: !!ctx.config.vapid, vapid_public_key: ctx.config.vapid?.publicKey ?? null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/me/push-subscriptions',
      tags,
      summary: 'Register this browser’s push subscription (the same endpoint again renews it)',
      security: bearer,
      request: { body: jsonBody(SubscriptionBody) },
      responses: { 201: jsonAnswer(PushSubscriptionSchema, 'the subscription (its keys are never shown)') },
    }),
    async (c) => {
      const p = await person(c);
      return c.json(formatPushSubscription(await registerPushSubscription(ctx, p.personId, c.req.valid('json'))), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me/push-subscriptions',
      tags,
      summary: 'The signed-in person’s push subscriptions, newest first',
      security: bearer,
      request: { query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(PushSubscriptionSchema), 'subscriptions') },
    }),
    async (c) => {
      const p = await person(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const rows = await listPushSubscriptions(ctx, p.personId, { limit, before: decodeCursor(q.cursor, z.string()) });
      return c.json(
        toPage(rows, limit, (r) => r.id, formatPushSubscription),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/me/push-subscriptions/{subscriptionId}',
      tags,
      summary: 'Remove a push subscription',
      security: bearer,
      request: { params: z.object({ subscriptionId: idParam('subscriptionId', 'push_01hxyz') }) },
      responses: { 204: noContent('removed') },
    }),
    async (c) => {
      const p = await person(c);
      await removePushSubscription(ctx, p.personId, c.req.valid('param').subscriptionId);
      return c.body(null, 204);
    },
  );
}
