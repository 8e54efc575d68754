// /v1/macros and running a macro on a conversation (issue 36). Every member lists and runs the
// shared macros and their own; owners and admins manage the shared ones.
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type Access, requireScope, type Scope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { ConversationSchema } from '../conversations/format.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { pageSchema } from '../http/pagination.js';
import { createMacro, deleteMacro, listMacros, runMacro, runMacroOnMany, updateMacro } from './macros.js';
import { MacroBody, MacroPatch, MacroRunBody, MacroRunSchema, MacroSchema } from './schema.js';

const params = z.object({ macroId: idParam('macroId', 'mac_01hxyz') });

/** Who calls, refused before the request's ids and body are looked at (authorize first). */
async function caller(c: Context, ctx: Ctx, scope: Scope): Promise<Access> {
  const access = await requireAccess(c as never, ctx);
  requireScope(access, scope);
  return access;
}

export function registerMacroRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/macros',
      tags: ['macros'],
      summary: 'The shared macros and the caller’s own, by name',
      security: bearer,
      responses: { 200: jsonAnswer(pageSchema(MacroSchema), 'every macro the caller sees; next_cursor is always null') },
    }),
    async (c) => c.json(await listMacros(ctx, await caller(c, ctx, 'conversations:read')), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/macros',
      tags: ['macros'],
      summary: 'Make a macro (personal: any member; shared: owners and admins)',
      description:
        'Everything the actions name must exist in the workspace (400 invalid_request with `issues`). 409 too_many_macros past 200 per member (or shared).',
      security: bearer,
      request: { body: jsonBody(MacroBody) },
      responses: { 201: jsonAnswer(MacroSchema, 'the macro'), 409: { description: 'too_many_macros' } },
    }),
    async (c) => c.json(await createMacro(ctx, await caller(c, ctx, 'conversations:write'), c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/macros/{macroId}',
      tags: ['macros'],
      summary: 'Change a macro (its member, or owners and admins for a shared one)',
      security: bearer,
      request: { params, body: jsonBody(MacroPatch) },
      responses: { 200: jsonAnswer(MacroSchema, 'the macro as it is now') },
    }),
    async (c) => c.json(await updateMacro(ctx, await caller(c, ctx, 'conversations:write'), c.req.valid('param').macroId, c.req.valid('json')), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/macros/{macroId}',
      tags: ['macros'],
      summary: 'Delete a macro',
      security: bearer,
      request: { params },
      responses: { 204: { description: 'deleted' } },
    }),
    async (c) => {
      await deleteMacro(ctx, await caller(c, ctx, 'conversations:write'), c.req.valid('param').macroId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/macros/{macroId}',
      tags: ['macros'],
      summary: 'Run a macro on one conversation',
      description:
        'Its actions in order, as the caller: the data changes are one timeline line and one conversation.updated; a saved reply goes out as the caller’s reply. Actions that would change nothing are left out.',
      security: bearer,
      request: { params: z.object({ conversationId: idParam('conversationId', 'cv_01hxyz'), macroId: idParam('macroId', 'mac_01hxyz') }) },
      responses: { 200: jsonAnswer(ConversationSchema, 'the conversation as it is now') },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await runMacro(ctx, await caller(c, ctx, 'conversations:write'), p.macroId, p.conversationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/macros/{macroId}/run',
      tags: ['macros'],
      summary: 'Run a macro on up to 100 conversations',
      description: 'Each conversation in its own transaction: one that fails (not found, an action refused) is reported and leaves the others done.',
      security: bearer,
      request: { params, body: jsonBody(MacroRunBody) },
      responses: { 200: jsonAnswer(MacroRunSchema, 'one result per conversation') },
    }),
    async (c) =>
      c.json(await runMacroOnMany(ctx, await caller(c, ctx, 'conversations:write'), c.req.valid('param').macroId, c.req.valid('json').conversation_ids), 200),
  );
}
