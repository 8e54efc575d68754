import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess, requirePerson } from '../http/auth.js';
import { bearer, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { deleteWorkspace } from '../lifecycle/workspace-deletion.js';
import { forbidden } from '../platform/errors.js';
import { andThen } from '../platform/maybe-promise.js';
import { createWorkspace, formatWorkspace, getWorkspace, updateWorkspace, WORKSPACE_NAME_MAX } from './service.js';

export const WorkspaceSchema = z
  .object({ id: z.string(), name: z.string(), retention_days: z.number().int().nullable(), created_at: z.string(), updated_at: z.string() })
  .openapi('Workspace');

export function registerWorkspaceRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workspace',
      tags: ['workspace'],
      summary: 'The caller’s workspace',
      security: bearer,
      responses: { 200: jsonAnswer(WorkspaceSchema, 'the workspace') },
    }),
    (c) =>
      // Answered at once when nothing needs awaiting (a cached key on SQLite): see src/http/dispatch.ts.
      andThen(requireAccess(c, ctx), (access) =>
        // A cached credential brought the workspace's row with the credentials epoch (one statement).
        access.workspaceRow
          ? c.json(formatWorkspace(access.workspaceRow), 200)
          : getWorkspace(ctx, access.workspaceId).then((row) => c.json(formatWorkspace(row), 200)),
      ),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/workspace',
      tags: ['workspace'],
      summary: 'Change workspace settings (owners only; retention deletes data, so no API key may)',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              retention_days: z
                .number()
                .int()
                .min(1)
                .max(36_500)
                .nullable()
                .optional()
                .openapi({ description: 'days a closed conversation is kept after its last change; null keeps everything' }),
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(WorkspaceSchema, 'the changed workspace') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'workspace:manage');
      return c.json(formatWorkspace(await updateWorkspace(ctx, access.workspaceId, c.req.valid('json'))), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workspaces',
      tags: ['workspace'],
      summary: 'Create a workspace with the signed-in person as owner (only with SVC_SIGNUP=open)',
      security: bearer,
      request: { body: jsonBody(z.object({ name: textUpTo(WORKSPACE_NAME_MAX, 1) }).strict()) },
      responses: { 201: jsonAnswer(WorkspaceSchema, 'the new workspace') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      if (ctx.config.signup !== 'open') throw forbidden('sign-up is closed on this server; the operator creates workspaces with svc bootstrap');
      const { workspace } = await createWorkspace(ctx, { name: c.req.valid('json').name, ownerEmail: person.email, origin: 'signup' });
      return c.json(formatWorkspace(workspace), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/workspace',
      tags: ['workspace'],
      summary: 'Delete the workspace (owners only, with its exact name)',
      description:
        'The workspace stops working at once: members, API keys, chat keys and its e-mail addresses are refused (mail is answered as an unknown recipient), webhook endpoints receive nothing more and are removed, and members left without another workspace lose their push subscriptions. A background job then deletes the data in batches. People keep their accounts.',
      security: bearer,
      request: {
        body: jsonBody(z.object({ name: textUpTo(WORKSPACE_NAME_MAX, 1).openapi({ description: 'the exact name of the workspace' }) }).strict()),
      },
      responses: { 202: jsonAnswer(z.object({ workspace_id: z.string(), deleted_at: z.string() }), 'deleted; the data goes in the background') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'workspace:delete');
      const actor = access.actor as { kind: 'member'; personId: string };
      const result = await deleteWorkspace(ctx, { workspaceId: access.workspaceId, requestedBy: actor.personId, confirmName: c.req.valid('json').name });
      return c.json(result, 202);
    },
  );
}
