// /v1/views (issue 37): saved views. Every member reads the shared views and their own; shared ones
// are made and changed by owners and admins (keys with workspace:manage, which have only shared ones).
import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { ViewFilterSchema } from '../conversations/filters.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { createView, deleteView, formatView, getView, listViews, MAX_NAME_LENGTH, MAX_VIEWS, SORTS, updateView, viewCounts } from './service.js';

const Sort = z.enum(SORTS).openapi({ description: 'activity: latest message first; created: newest first; sla_due: earliest SLA due time first' });

const ViewBody = z
  .object({
    name: z
      .string()
      .max(MAX_NAME_LENGTH * 4)
      .openapi({ example: 'Urgent, unassigned' }),
    filters: ViewFilterSchema.optional(),
    sort: Sort.optional(),
    shared: z.boolean().optional().openapi({ description: 'seen by the whole workspace (owners and admins only); default: personal for a member' }),
    position: z
      .number()
      .int()
      .min(0)
      .max(MAX_VIEWS)
      .optional()
      .openapi({ description: 'place within its group (shared views, or the member’s own), 0 first; the others move down' }),
  })
  .strict();

const ViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    shared: z.boolean(),
    filters: ViewFilterSchema,
    sort: Sort,
    position: z.number().int(),
    editable: z.boolean().openapi({ description: 'whether the caller may change or delete it' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('SavedView');

const params = z.object({ viewId: idParam('viewId', 'view_01hxyz') });

export function registerViewRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/views',
      tags: ['views'],
      summary: 'Saved views the caller sees: shared ones first, then their own, each in order',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(ViewSchema), next_cursor: z.null() }), 'every view the caller sees') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json({ data: await listViews(ctx, access), next_cursor: null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/views/counts',
      tags: ['views'],
      summary: 'How many conversations each view the caller sees holds now (the sidebar’s counts)',
      security: bearer,
      responses: {
        200: jsonAnswer(z.object({ data: z.array(z.object({ id: z.string(), count: z.number().int() })) }), 'one count per view, in sidebar order'),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json({ data: await viewCounts(ctx, access) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/views',
      tags: ['views'],
      summary: 'Save a view (personal; shared: owners and admins)',
      security: bearer,
      request: { body: jsonBody(ViewBody) },
      responses: { 201: jsonAnswer(ViewSchema, 'the view') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(await createView(ctx, access, c.req.valid('json')), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/views/{viewId}',
      tags: ['views'],
      summary: 'One view',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(ViewSchema, 'the view') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(formatView(await getView(ctx, access, c.req.valid('param').viewId), access), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/views/{viewId}',
      tags: ['views'],
      summary: 'Rename, change the filter or sort, share, or move a view',
      description: '`filters` replaces the filter. Sharing a view or taking a shared one back is for owners and admins.',
      security: bearer,
      request: { params, body: jsonBody(ViewBody.partial().strict()) },
      responses: { 200: jsonAnswer(ViewSchema, 'the view as it is now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(await updateView(ctx, access, c.req.valid('param').viewId, c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/views/{viewId}',
      tags: ['views'],
      summary: 'Delete a view',
      security: bearer,
      request: { params },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      await deleteView(ctx, access, c.req.valid('param').viewId);
      return c.body(null, 204);
    },
  );
}
