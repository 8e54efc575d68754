import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { WEBHOOK_EVENT_TYPES } from '../events/service.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import {
  attemptLog,
  createEndpoint,
  DELIVERY_LOG_SIZE,
  deleteEndpoint,
  deliveryLog,
  enableEndpoint,
  formatAttempt,
  formatDelivery,
  formatEndpoint,
  formatLogEntry,
  getEndpoint,
  listEndpoints,
  requestRedelivery,
  rotateSecret,
  updateEndpoint,
} from './service.js';

export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    inbox_id: z.string().nullable(),
    include_notes: z.boolean(),
    enabled: z.boolean(),
    disabled_at: z.string().nullable(),
    disabled_reason: z.string().nullable().openapi({ description: 'why the server disabled the endpoint; cleared by enable' }),
    failing_since: z.string().nullable().openapi({ description: 'start of the current run of failed attempts' }),
    previous_secret_expires_at: z.string().nullable().openapi({ description: 'until then the secret replaced by the last rotation signs too' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('WebhookEndpoint');

const WithSecret = WebhookEndpointSchema.extend({ secret: z.string().openapi({ description: 'whsec_…; shown only in this answer' }) }).openapi(
  'WebhookEndpointWithSecret',
);

const DeliverySchema = z
  .object({
    id: z.string(),
    webhook_id: z.string().openapi({ description: 'the webhook-id header (msg_…), the same on every attempt' }),
    event_id: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int().openapi({ description: 'scheduled attempts made (manual redeliveries not counted)' }),
    next_attempt_at: z.string().nullable(),
    redelivery_requested: z.boolean(),
    last_attempt_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('WebhookDelivery');

const AttemptSchema = z
  .object({
    id: z.string(),
    delivery_id: z.string(),
    webhook_id: z.string().openapi({ description: 'the webhook-id header (msg_…), the same on every attempt of a delivery' }),
    attempt: z.number().int().nullable().openapi({ description: 'number of the scheduled attempt; null for a manual redelivery' }),
    manual: z.boolean(),
    started_at: z.string(),
    latency_ms: z.number().int(),
    status: z.enum(['succeeded', 'failed']),
    status_code: z.number().int().nullable(),
    response: z.string().nullable().openapi({ description: 'the start of the receiver’s answer' }),
    error: z.string().nullable(),
  })
  .openapi('WebhookAttempt');

const LogEntrySchema = AttemptSchema.extend({
  event_id: z.string(),
  event_type: z.string().nullable(),
  delivery_status: z.enum(['pending', 'succeeded', 'failed']),
  next_attempt_at: z.string().nullable(),
  redelivery_requested: z.boolean(),
}).openapi('WebhookDeliveryLogEntry');

const EndpointBody = z
  .object({
    url: z.string().min(1).max(2048),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).optional().openapi({ description: 'default: every webhook event type' }),
    inbox_id: z.string().max(100).nullable().optional(),
    include_notes: z.boolean().optional(),
  })
  .strict();

const webhookId = z.object({ webhookId: idParam('webhookId', 'wh_01hxyz') });
const tags = ['webhooks'];

export function registerWebhookRoutes(app: ApiApp, ctx: Ctx) {
  const manager = async (c: Parameters<typeof requireAccess>[0]) => {
    const access = await requireAccess(c, ctx);
    authorize(access, 'webhooks:manage');
    return access;
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks',
      tags,
      summary: 'Create a webhook endpoint; the signing secret is in this answer only',
      security: bearer,
      request: { body: jsonBody(EndpointBody) },
      responses: { 201: jsonAnswer(WithSecret, 'the endpoint with its signing secret') },
    }),
    async (c) => {
      const access = await manager(c);
      const { endpoint, secret } = await createEndpoint(ctx, access, c.req.valid('json'));
      return c.json({ ...formatEndpoint(endpoint, ctx.clock.now()), secret }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks',
      tags,
      summary: 'Webhook endpoints, newest first',
      security: bearer,
      request: { query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(WebhookEndpointSchema), 'endpoints') },
    }),
    async (c) => {
      const access = await manager(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const before = decodeCursor(q.cursor, z.string());
      const rows = await listEndpoints(ctx, access, { limit, before });
      const now = ctx.clock.now();
      return c.json(
        toPage(
          rows,
          limit,
          (r) => r.id,
          (r) => formatEndpoint(r, now),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{webhookId}',
      tags,
      summary: 'One webhook endpoint (never its secret)',
      security: bearer,
      request: { params: webhookId },
      responses: { 200: jsonAnswer(WebhookEndpointSchema, 'the endpoint') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(formatEndpoint(await getEndpoint(ctx, access, c.req.valid('param').webhookId), ctx.clock.now()), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/webhooks/{webhookId}',
      tags,
      summary: 'Change url, events, inbox_id or include_notes',
      security: bearer,
      request: { params: webhookId, body: jsonBody(EndpointBody.partial().strict()) },
      responses: { 200: jsonAnswer(WebhookEndpointSchema, 'the endpoint') },
    }),
    async (c) => {
      const access = await manager(c);
      const endpoint = await updateEndpoint(ctx, access, c.req.valid('param').webhookId, c.req.valid('json'));
      return c.json(formatEndpoint(endpoint, ctx.clock.now()), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/webhooks/{webhookId}',
      tags,
      summary: 'Delete an endpoint; nothing more is sent to it',
      security: bearer,
      request: { params: webhookId },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const access = await manager(c);
      await deleteEndpoint(ctx, access, c.req.valid('param').webhookId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{webhookId}/enable',
      tags,
      summary: 'Enable a disabled endpoint again (clears the disabled reason)',
      security: bearer,
      request: { params: webhookId },
      responses: { 200: jsonAnswer(WebhookEndpointSchema, 'the endpoint') },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(formatEndpoint(await enableEndpoint(ctx, access, c.req.valid('param').webhookId), ctx.clock.now()), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{webhookId}/secret',
      tags,
      summary: 'Rotate the signing secret; the old one keeps signing beside the new one for 24 hours',
      security: bearer,
      request: { params: webhookId },
      responses: { 200: jsonAnswer(WithSecret, 'the endpoint with its new secret') },
    }),
    async (c) => {
      const access = await manager(c);
      const { endpoint, secret } = await rotateSecret(ctx, access, c.req.valid('param').webhookId);
      return c.json({ ...formatEndpoint(endpoint, ctx.clock.now()), secret }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{webhookId}/deliveries',
      tags,
      summary: 'Delivery log: the newest 100 attempts with their result, latency, start of the answer, error, delivery id and webhook-id',
      security: bearer,
      request: { params: webhookId, query: z.object({ limit: z.coerce.number().int().min(1).max(DELIVERY_LOG_SIZE).optional() }) },
      responses: { 200: jsonAnswer(z.object({ data: z.array(LogEntrySchema) }), 'attempts, newest first') },
    }),
    async (c) => {
      const access = await manager(c);
      const rows = await deliveryLog(ctx, access, c.req.valid('param').webhookId, c.req.valid('query').limit ?? DELIVERY_LOG_SIZE);
      return c.json({ data: rows.map(formatLogEntry) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{webhookId}/attempts',
      tags,
      summary: 'Attempt log: every kept attempt, newest first',
      security: bearer,
      request: { params: webhookId, query: listQuery.extend({ delivery_id: z.string().max(100).optional() }) },
      responses: { 200: jsonAnswer(pageSchema(AttemptSchema), 'attempts') },
    }),
    async (c) => {
      const access = await manager(c);
      const q = c.req.valid('query');
      const limit = q.limit ?? 50;
      const before = decodeCursor(q.cursor, z.object({ started_at: z.string(), id: z.string() }));
      const rows = await attemptLog(ctx, access, c.req.valid('param').webhookId, { limit, before, deliveryId: q.delivery_id });
      return c.json(
        toPage(
          rows,
          limit,
          (r) => ({ started_at: r.started_at, id: r.id }),
          (r) => formatAttempt(r),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver',
      tags,
      summary: 'Send a delivery once more (one manual attempt with the same webhook-id; no new retry schedule)',
      security: bearer,
      request: { params: webhookId.extend({ deliveryId: idParam('deliveryId', 'dlv_01hxyz') }) },
      responses: { 202: jsonAnswer(DeliverySchema, 'the delivery; the attempt follows at once and shows in the logs') },
    }),
    async (c) => {
      const access = await manager(c);
      const { webhookId: id, deliveryId } = c.req.valid('param');
      return c.json(formatDelivery(await requestRedelivery(ctx, access, id, deliveryId)), 202);
    },
  );
}
