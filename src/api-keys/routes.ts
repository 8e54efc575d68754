import { createRoute, z } from '@hono/zod-openapi';
import { authorize, SCOPES } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { createApiKey, formatApiKey, listApiKeys, revokeApiKey } from './service.js';

export const ApiKeySchema = z
  .object({
    id: z.string(),
    prefix: z.string(),
    name: z.string(),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    inbox_ids: z.array(z.string()).nullable(),
    scopes: z.array(z.string()),
  })
  .openapi('ApiKey');

export function registerApiKeyRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/api-keys',
      tags: ['api keys'],
      summary: 'List the workspace’s keys (never their secrets); owners and admins',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(ApiKeySchema) }), 'keys') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'api_keys:manage');
      return c.json({ data: (await listApiKeys(ctx, access.workspaceId)).map(formatApiKey) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/api-keys',
      tags: ['api keys'],
      summary: 'Create a key; the secret is in this answer only',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              name: textUpTo(200, 1),
              scopes: z.array(z.enum(SCOPES)).optional().openapi({ description: 'default: every scope' }),
              inbox_ids: z.array(z.string()).optional().openapi({ description: 'default: every inbox' }),
              expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(ApiKeySchema.extend({ secret: z.string() }), 'the key with its secret') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'api_keys:manage');
      const body = c.req.valid('json');
      const { key, secret } = await createApiKey(ctx, {
        workspaceId: access.workspaceId,
        name: body.name,
        scopes: body.scopes,
        inboxIds: body.inbox_ids,
        expiresAt: body.expires_at,
      });
      return c.json({ ...formatApiKey(key), secret }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/api-keys/{keyId}',
      tags: ['api keys'],
      summary: 'Revoke a key',
      security: bearer,
      request: { params: z.object({ keyId: idParam('keyId', 'key_01hxyz') }) },
      responses: { 200: jsonAnswer(ApiKeySchema, 'the revoked key') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'api_keys:manage');
      return c.json(formatApiKey(await revokeApiKey(ctx, c.req.valid('param').keyId, access.workspaceId)), 200);
    },
  );
}
