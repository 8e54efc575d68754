// GET/PUT/DELETE /v1/conversations/{id}/draft (./drafts.ts).
import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { htmlNestsDeeperThan, MAX_HTML_CHARS, MAX_HTML_DEPTH } from '../mail/html-limits.js';
import { DraftsSchema, deleteDraft, getDrafts, putDraft } from './drafts.js';

const params = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });
const path = '/v1/conversations/{conversationId}/draft';

export function registerDraftRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path,
      tags: ['conversations'],
      summary: 'The caller’s draft in this conversation, and which teammates have one (members only)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(DraftsSchema, 'the draft (null when none) and the teammates writing') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(await getDrafts(ctx, access, c.req.valid('param').conversationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path,
      tags: ['conversations'],
      summary: 'Save the caller’s draft (the panel saves as you type); one with no text and no files is removed',
      security: bearer,
      request: {
        params,
        body: jsonBody(
          z
            .object({
              kind: z.enum(['message', 'note']),
              html: z
                .string()
                .max(MAX_HTML_CHARS)
                .refine((html) => !htmlNestsDeeperThan(html), `html must not nest elements deeper than ${MAX_HTML_DEPTH} levels`)
                .openapi({ description: 'sanitized before it is stored' }),
              attachment_ids: z.array(z.string().max(100)).max(100).optional().openapi({ description: 'unsent uploads of this conversation' }),
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(DraftsSchema, 'the draft as stored and the teammates writing') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      return c.json(
        await putDraft(ctx, access, c.req.valid('param').conversationId, { kind: b.kind, html: b.html, attachmentIds: b.attachment_ids ?? [] }),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path,
      tags: ['conversations'],
      summary: 'Discard the caller’s draft',
      security: bearer,
      request: { params },
      responses: { 204: { description: 'discarded (or there was none)' } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      await deleteDraft(ctx, access, c.req.valid('param').conversationId);
      return c.body(null, 204);
    },
  );
}
