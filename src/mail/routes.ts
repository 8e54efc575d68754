import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ChannelSchema } from '../channels/format.js';
import { formatChannel } from '../channels/service.js';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv, BodyLimitRule } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer } from '../http/openapi.js';
import { safeEqual } from '../platform/crypto.js';
import { notFound, unauthorized } from '../platform/errors.js';
import { rotateForwardingAddress } from './forwarding.js';
import type { MailHandlers } from './handlers.js';
import { ingestEmail } from './ingest.js';

export const ingressBodyLimits: BodyLimitRule[] = [{ method: 'POST', path: /^\/v1\/ingress\/email$/, maxBytes: (ctx) => ctx.config.ingressMaxBytes }];

const IngestResultSchema = z.object({
  inbox_id: z.string(),
  conversation_id: z.string(),
  message_id: z.string(),
  duplicate: z.boolean().openapi({ description: 'the inbox had this Message-ID already; stored once' }),
  new_conversation: z.boolean(),
});

function requireIngressSecret(c: Context<AppEnv>, ctx: Ctx): void {
  const ingress = ctx.config.ingress;
  if (!ingress) throw notFound('inbound mail ingress (SVC_INGRESS_SECRET is not set)');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!m || !safeEqual(m[1], ingress.secret)) throw unauthorized('send Authorization: Bearer <SVC_INGRESS_SECRET>');
}

/** `handlers`: the ingress handler table (src/server/mail-handlers.ts). */
export function registerMailRoutes(app: ApiApp, ctx: Ctx, handlers: MailHandlers) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ingress/email',
      tags: ['mail'],
      summary: 'Deliver a raw RFC 822 message (Bearer: the ingress secret); recipients from ?to= or else the message headers',
      security: bearer,
      request: {
        query: z.object({
          to: z
            .union([z.string().max(254), z.array(z.string().max(254)).max(100)])
            .optional()
            .openapi({ description: 'recipient address (repeatable)' }),
          from: z.string().max(254).optional().openapi({ description: 'envelope sender' }),
        }),
        body: { content: { 'message/rfc822': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
      },
      responses: { 201: jsonAnswer(z.object({ data: z.array(IngestResultSchema) }), 'stored (committed) per receiving inbox') },
    }),
    async (c) => {
      requireIngressSecret(c, ctx);
      const raw = Buffer.from(await c.req.arrayBuffer());
      const results = await ingestEmail(ctx, { raw, recipients: c.req.queries('to') ?? [], envelopeFrom: c.req.query('from') ?? null, via: 'http', handlers });
      return c.json({ data: results }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/channels/{channelId}/forwarding-address/rotate',
      tags: ['channels'],
      summary: 'New forwarding address for an e-mail channel; the old one stops receiving mail at once',
      security: bearer,
      request: { params: z.object({ channelId: idParam('channelId', 'ch_01hxyz') }) },
      responses: { 200: jsonAnswer(ChannelSchema, 'the channel with its new forwarding address') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const channel = await rotateForwardingAddress(ctx, access, c.req.valid('param').channelId);
      return c.json(formatChannel(channel, ctx.config), 200);
    },
  );
}
