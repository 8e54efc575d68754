// /v1/analytics: properties (owners and admins, or keys with workspace:manage) and the month's usage.
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { pageSchema } from '../http/pagination.js';
import { formatProperty, formatUsage, PropertySchema, UsageSchema } from './format.js';
import { createProperty, deleteProperty, getProperty, listProperties, MAX_PROPERTY_NAME_CHARS, updateProperty, workspaceUsage } from './properties.js';
import { ingestionOf } from './runtime.js';

const params = z.object({ propertyId: idParam('propertyId', 'ap_01hxyz') });
const nameField = z.string().max(MAX_PROPERTY_NAME_CHARS * 4);

export function registerAnalyticsRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/properties',
      tags: ['analytics'],
      summary: 'The workspace’s analytics properties (websites counted), by domain',
      security: bearer,
      responses: { 200: jsonAnswer(pageSchema(PropertySchema), 'every property (at most 100), by domain') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      const rows = await listProperties(ctx, access.workspaceId);
      return c.json({ data: rows.map(formatProperty), next_cursor: null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/analytics/properties',
      tags: ['analytics'],
      summary: 'Count a website (owners and admins, or keys with workspace:manage)',
      description: 'A domain is counted by one property on the server (409 domain_taken). Bad domains (schemes, paths, IP addresses, localhost) get 400.',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              domain: z.string().max(300),
              name: nameField.optional(),
              subdomains: z.boolean().optional(),
              chat_channel_id: z.string().max(100).nullable().optional(),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(PropertySchema, 'the property') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:manage');
      const b = c.req.valid('json');
      const p = await createProperty(ctx, {
        workspaceId: access.workspaceId,
        domain: b.domain,
        name: b.name,
        subdomains: b.subdomains,
        chatChannelId: b.chat_channel_id,
      });
      return c.json(formatProperty(p), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/properties/{propertyId}',
      tags: ['analytics'],
      summary: 'One analytics property',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(PropertySchema, 'the property') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      return c.json(formatProperty(await getProperty(ctx, access.workspaceId, c.req.valid('param').propertyId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/analytics/properties/{propertyId}',
      tags: ['analytics'],
      summary: 'Change a property’s name, subdomains or chat channel (owners and admins, or keys with workspace:manage)',
      security: bearer,
      request: {
        params,
        body: jsonBody(
          z.object({ name: nameField.optional(), subdomains: z.boolean().optional(), chat_channel_id: z.string().max(100).nullable().optional() }).strict(),
        ),
      },
      responses: { 200: jsonAnswer(PropertySchema, 'the property') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:manage');
      const b = c.req.valid('json');
      const p = await updateProperty(ctx, access.workspaceId, c.req.valid('param').propertyId, {
        name: b.name,
        subdomains: b.subdomains,
        chatChannelId: b.chat_channel_id,
      });
      return c.json(formatProperty(p), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/analytics/properties/{propertyId}',
      tags: ['analytics'],
      summary: 'Stop counting a website and delete its data (owners and admins, or keys with workspace:manage)',
      description: 'Counting stops at once; its events, visits and daily totals are removed in the background.',
      security: bearer,
      request: { params },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:manage');
      await deleteProperty(ctx, access.workspaceId, c.req.valid('param').propertyId);
      ingestionOf(ctx).forgetProperties();
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/usage',
      tags: ['analytics'],
      summary: 'Events counted this UTC month against the workspace’s monthly limit',
      security: bearer,
      responses: { 200: jsonAnswer(UsageSchema, 'the month’s usage') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      return c.json(formatUsage(await workspaceUsage(ctx, access.workspaceId)), 200);
    },
  );
}
