import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { getAwayReply, setAwayReply } from './away.js';
import { AwayReplySchema, GreetingSchema, NEXT_OPENING } from './format.js';
import { getGreeting, setGreeting } from './service.js';
import { ANSWER_MAX_CHARS } from './settings.js';

const answerPatch = (name: string) =>
  z
    .object({
      enabled: z.boolean().optional(),
      text: z
        .object({ en: textUpTo(ANSWER_MAX_CHARS).optional(), tr: textUpTo(ANSWER_MAX_CHARS).optional() })
        .strict()
        .optional(),
    })
    .strict()
    .openapi(name);

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
        'Sent once per new e-mail conversation through its channel, with Auto-Submitted: auto-replied, threaded. Never to automatic mail, noreply-style or list addresses, the team’s own addresses, imported mail, a contact greeted in the last 24 hours, or while a migration into the inbox is under way; outside business hours the away reply answers instead when it is on.',
      security: bearer,
      request: { params, body: jsonBody(answerPatch('InboxGreetingPatch')) },
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

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/away-reply',
      tags: ['inboxes'],
      summary: 'The inbox’s out-of-office reply (automatic answer to mail that arrives outside business hours)',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(AwayReplySchema, 'the away reply') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await getAwayReply(ctx, inbox), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/inboxes/{inboxId}/away-reply',
      tags: ['inboxes'],
      summary: 'Switch the out-of-office reply on or off, or change its texts',
      description: `A customer’s mail (any in a conversation, not only the first) that arrives while the inbox is closed by its business hours gets one automatic answer through its channel, with Auto-Submitted: auto-replied, threaded; ${NEXT_OPENING} in the text becomes the next opening. At most once per contact in 24 hours, and never to automatic mail, noreply-style or list addresses, the team’s own addresses, imported mail, or while a migration into the inbox is under way. It answers instead of the greeting.`,
      security: bearer,
      request: { params, body: jsonBody(answerPatch('InboxAwayReplyPatch')) },
      responses: { 200: jsonAnswer(AwayReplySchema, 'the away reply as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await setAwayReply(ctx, inbox, c.req.valid('json')), 200);
    },
  );
}
