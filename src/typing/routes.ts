// A member's typing signal (the panel's composer sends it while a reply is being written).
import { findPersonById } from '../people/service.js';
import { createRoute, z } from '@hono/zod-openapi';
import { canSeeInbox, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer } from '../http/openapi.js';
import { findConversation } from '../conversations/store.js';
import { forbidden, notFound } from '../platform/errors.js';
import { signalTyping, TypingThrottle } from './service.js';

export function registerTypingRoutes(app: ApiApp, ctx: Ctx) {
  const throttle = new TypingThrottle();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/typing',
      tags: ['conversations'],
      summary: 'Tell the contact (and the team) that this member is writing a reply',
      description:
        'A realtime-only `typing` event (never a webhook, kept 10 minutes). Send it every few seconds while writing; signals closer than 2.5 s apart are answered but not stored.',
      security: bearer,
      request: { params: z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') }) },
      responses: { 200: jsonAnswer(z.object({ stored: z.boolean() }), 'the signal was taken') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      if (access.actor.kind !== 'member') throw forbidden('only a signed-in member types');
      const conversation = await findConversation(ctx.db, access.workspaceId, c.req.valid('param').conversationId);
      if (!conversation || !canSeeInbox(access, conversation.inbox_id)) throw notFound('no such conversation');
      const person = await findPersonById(ctx, access.actor.personId);
      const result = await signalTyping(ctx, throttle, {
        workspaceId: access.workspaceId,
        inboxId: conversation.inbox_id,
        conversationId: conversation.id,
        typist: { type: 'member', personId: access.actor.personId, name: person?.name ?? null },
      });
      return c.json(result, 200);
    },
  );
}
