import { createRoute, z } from '@hono/zod-openapi';
import { requireInbox, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, jsonAnswer, jsonBody } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { createChatChannel, createEmailChannel, formatChannel, listChannels } from './service.js';

export const ChannelSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['email', 'chat']),
    inbox_id: z.string(),
    name: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    address: z.string().nullable().optional(),
    display_name: z.string().nullable().optional(),
    from_address: z.string().nullable().optional(),
    forwarding_address: z.string().nullable().optional(),
    smtp: z
      .object({ host: z.string().nullable(), port: z.number().nullable(), tls: z.string().nullable(), username: z.string().nullable(), password_set: z.boolean() })
      .nullable()
      .optional(),
    public_key: z.string().nullable().optional(),
    origins: z.array(z.string()).optional(),
    allow_anonymous: z.boolean().optional(),
    ask_email_offline: z.boolean().optional(),
    greeting: z.string().nullable().optional(),
  })
  .openapi('Channel');

const NewEmail = z
  .object({
    kind: z.literal('email'),
    inbox_id: z.string(),
    name: z.string().min(1).max(200),
    address: z.string().min(3).max(254),
    display_name: z.string().max(200).optional(),
    from_address: z.string().max(254).optional(),
    smtp_host: z.string().max(253).optional(),
    smtp_port: z.number().int().min(1).max(65535).optional(),
    tls: z.enum(['starttls', 'tls', 'none']).optional(),
    smtp_username: z.string().max(500).optional(),
    smtp_password: z.string().max(2000).optional(),
  })
  .strict();
const NewChat = z
  .object({
    kind: z.literal('chat'),
    inbox_id: z.string(),
    name: z.string().min(1).max(200),
    origins: z.array(z.string().max(500)).min(1).max(50),
    allow_anonymous: z.boolean().optional(),
    ask_email_offline: z.boolean().optional(),
    greeting: z.string().max(2000).optional(),
  })
  .strict();

export function registerChannelRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/channels',
      tags: ['channels'],
      summary: 'Channels of the workspace or of one inbox',
      security: bearer,
      request: { query: z.object({ inbox_id: z.string().optional() }) },
      responses: { 200: jsonAnswer(z.object({ data: z.array(ChannelSchema) }), 'channels') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const { inbox_id } = c.req.valid('query');
      if (inbox_id) requireInbox(access, inbox_id);
      const rows = (await listChannels(ctx, access.workspaceId, inbox_id)).filter((ch) => access.inboxIds === null || access.inboxIds.includes(ch.inbox_id));
      return c.json({ data: rows.map((ch) => formatChannel(ch, ctx.config)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/channels',
      tags: ['channels'],
      summary: 'Create an e-mail or chat channel (owners, or keys with workspace:manage)',
      security: bearer,
      request: { body: jsonBody(z.discriminatedUnion('kind', [NewEmail, NewChat])) },
      responses: { 201: jsonAnswer(ChannelSchema, 'the new channel') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'workspace:manage');
      const b = c.req.valid('json');
      const inbox = await resolveInbox(ctx, access.workspaceId, b.inbox_id);
      requireInbox(access, inbox.id);
      const base = { workspaceId: access.workspaceId, inboxId: inbox.id, name: b.name };
      const channel =
        b.kind === 'email'
          ? await createEmailChannel(ctx, {
              ...base,
              address: b.address,
              displayName: b.display_name,
              fromAddress: b.from_address,
              smtpHost: b.smtp_host,
              smtpPort: b.smtp_port,
              tls: b.tls,
              smtpUsername: b.smtp_username,
              smtpPassword: b.smtp_password,
            })
          : await createChatChannel(ctx, { ...base, origins: b.origins, allowAnonymous: b.allow_anonymous, askEmailOffline: b.ask_email_offline, greeting: b.greeting });
      return c.json(formatChannel(channel, ctx.config), 201);
    },
  );
}
