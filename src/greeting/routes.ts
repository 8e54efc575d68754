import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { GreetingSchema } from './format.js';
import { GREETING_MAX_CHARS, getGreeting, setGreeting } from './service.js';

const GreetingPatchSchema = z
  .object({
    enabled: z.boolean().optional(),
    text: z
      .object({ en: textUpTo(GREETING_MAX_CHARS).optional(), tr: textUpTo(GREETING_MAX_CHARS).optional() })
      .strict()
      .optional(),
  })
  .strict()
  .openapi('InboxGreetingPatch');

const params = z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') });

export function registerGreetingRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/greeting',
      tags: ['inboxes'],
      summary: 'The inbox greeting (automatic answer to the first mail of a new conversation)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(GreetingSchema, 'the greeting') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json((await getGreeting(ctx, access, inbox.id)).greeting, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/inboxes/{inboxId}/greeting',
      tags: ['inboxes'],
      summary: 'Switch the inbox greeting on or off, or change its texts',
      description:
        'Sent once per new e-mail conversation through its channel, with Auto-Submitted: auto-replied, threaded. Never to automatic mail, noreply-style or list addresses, the team’s own addresses, imported mail, a contact greeted in the last 24 hours, or while a migration into the inbox is under way.',
      security: bearer,
      request: { params, body: jsonBody(GreetingPatchSchema) },
      responses: { 200: jsonAnswer(GreetingSchema, 'the greeting as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await setGreeting(ctx, access, inbox.id, c.req.valid('json')), 200);
    },
  );
}
