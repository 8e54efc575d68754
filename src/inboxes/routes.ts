import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox, requireManager } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { deleteInbox } from '../lifecycle/inbox-deletion.js';
import { createInbox, formatInbox, listInboxes, resolveInbox, rotateIdentitySecret, updateInbox } from './service.js';

export const InboxSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    locale: z.string(),
    timezone: z.string(),
    mode: z.enum(['live', 'async']),
    expected_reply_minutes: z.number().int().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Inbox');

const InboxPatchSchema = z
  .object({
    name: textUpTo(200, 1).optional(),
    slug: z.string().min(1).max(64).optional(),
    locale: z.string().min(1).max(100).optional(),
    timezone: z.string().min(1).max(100).optional(),
    mode: z.enum(['live', 'async']).optional(),
    expected_reply_minutes: z.number().int().min(1).max(525_600).nullable().optional(),
  })
  .strict()
  .openapi('InboxPatch');

const InboxDeletedSchema = z
  .object({
    inbox_id: z.string(),
    deleted_at: z.string(),
    channels_deleted: z.array(z.string()),
    webhook_endpoints_deleted: z.array(z.string()),
    api_keys_changed: z.array(z.string()).openapi({ description: 'keys whose inbox limit listed this inbox among others' }),
    api_keys_revoked: z.array(z.string()).openapi({ description: 'keys whose inbox limit listed only this inbox' }),
    migrations_cancelled: z.array(z.string()),
    broadcasts_cancelled: z.array(z.string()),
  })
  .openapi('InboxDeleted');

export function registerInboxRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes',
      tags: ['inboxes'],
      summary: 'Inboxes the caller reaches',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(InboxSchema) }), 'inboxes') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json({ data: (await listInboxes(ctx, access.workspaceId, access.inboxIds)).map(formatInbox) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}',
      tags: ['inboxes'],
      summary: 'One inbox, by id or slug',
      security: bearer,
      request: { params: z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') }) },
      responses: { 200: jsonAnswer(InboxSchema, 'the inbox') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(formatInbox(inbox), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/inboxes',
      tags: ['inboxes'],
      summary: 'Create an inbox (owners and admins, or keys with workspace:manage)',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              name: textUpTo(200, 1),
              slug: z.string().optional(),
              locale: z.string().optional(),
              timezone: z.string().optional(),
              mode: z.enum(['live', 'async']).optional(),
              expected_reply_minutes: z.number().int().min(1).nullable().optional(),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(InboxSchema, 'the new inbox') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const b = c.req.valid('json');
      const inbox = await createInbox(ctx, {
        workspaceId: access.workspaceId,
        name: b.name,
        slug: b.slug,
        locale: b.locale,
        timezone: b.timezone,
        mode: b.mode,
        expectedReplyMinutes: b.expected_reply_minutes,
      });
      return c.json(formatInbox(inbox), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/inboxes/{inboxId}',
      tags: ['inboxes'],
      summary: 'Change an inbox (owners and admins, or keys with workspace:manage)',
      description:
        'Any of name, slug (unique in the workspace), locale (a language tag), timezone (an IANA zone name), mode and expected_reply_minutes (null clears it). A body without any of them is refused. Emits inbox.updated on the realtime stream.',
      security: bearer,
      request: { params: z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') }), body: jsonBody(InboxPatchSchema) },
      responses: { 200: jsonAnswer(InboxSchema, 'the inbox as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireManager(access, 'workspace:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      const b = c.req.valid('json');
      const saved = await updateInbox(ctx, access.workspaceId, inbox.id, {
        name: b.name,
        slug: b.slug,
        locale: b.locale,
        timezone: b.timezone,
        mode: b.mode,
        expectedReplyMinutes: b.expected_reply_minutes,
      });
      return c.json(formatInbox(saved), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/inboxes/{inboxId}',
      tags: ['inboxes'],
      summary: 'Delete an inbox (owners and admins, or keys with workspace:manage and no inbox limit)',
      description:
        'The inbox stops at once: its channels are removed (mail to their addresses gets 550, chat keys and visitor sessions are refused), webhook endpoints limited to it are deleted, it leaves the inbox limits of API keys (a key that reached only this inbox is revoked), migrations into it and its unfinished broadcasts are cancelled. A background job then deletes its conversations with messages and files, its contacts’ external ids in it, its broadcasts and its Amazon SES tenant; contacts stay in the workspace.',
      security: bearer,
      request: { params: z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') }) },
      responses: { 202: jsonAnswer(InboxDeletedSchema, 'deleted; the data goes in the background') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireManager(access, 'workspace:manage', { wholeWorkspace: true });
      return c.json(await deleteInbox(ctx, access, c.req.valid('param').inboxId), 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/inboxes/{inboxId}/identity-secret',
      tags: ['inboxes'],
      summary: 'Rotate the inbox identity secret (owners and admins); the new secret is in this answer only',
      description:
        'The secret proves a visitor’s external id to the chat widget: identity_hash = hex HMAC-SHA256(secret, external_id). Sessions opened with the old secret keep working until they expire.',
      security: bearer,
      request: { params: z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') }) },
      responses: { 200: jsonAnswer(z.object({ identity_secret: z.string() }), 'the new secret') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json({ identity_secret: await rotateIdentitySecret(ctx, access.workspaceId, inbox.id) }, 200);
    },
  );
}
