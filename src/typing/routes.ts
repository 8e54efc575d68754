// A member's typing signal (the panel's composer sends it while a reply is being written) and viewing
// presence (the panel sends it while a conversation is open), for collision warnings.

import { createRoute, z } from '@hono/zod-openapi';
import { canSeeInbox, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { findConversation } from '../conversations/store.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer } from '../http/openapi.js';
import { findPersonById } from '../people/service.js';
import { forbidden, notFound } from '../platform/errors.js';
import { signalTyping, TypingThrottle } from './service.js';
import { signalViewing, VIEWING_MIN_INTERVAL_MS, VIEWING_REPEAT_MS, VIEWING_SHOWN_MS, ViewingThrottle } from './viewing.js';

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
  const viewing = new ViewingThrottle();
  const viewingParams = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });
  const ViewingAnswer = z.object({
    stored: z.boolean(),
    until: z.string().openapi({ description: 'until when readers show this member as viewing' }),
    viewers: z
      .array(z.object({ member_id: z.string(), name: z.string().nullable(), until: z.string() }))
      .openapi({ description: 'the other members viewing the conversation now (empty in the answer to a leave signal)' }),
  });
  /** The signed-in member and the conversation, when they may see it (else 403 for keys, 404). */
  async function viewer(c: Parameters<typeof requireAccess>[0], conversationId: string) {
    const access = await requireAccess(c, ctx);
    requireScope(access, 'conversations:read');
    if (access.actor.kind !== 'member') throw forbidden('only a signed-in member views conversations');
    const conversation = await findConversation(ctx.db, access.workspaceId, conversationId);
    if (!conversation || !canSeeInbox(access, conversation.inbox_id)) throw notFound('no such conversation');
    const person = await findPersonById(ctx, access.actor.personId);
    return {
      workspaceId: access.workspaceId,
      inboxId: conversation.inbox_id,
      conversationId: conversation.id,
      viewer: { personId: access.actor.personId, name: person?.name ?? null },
    };
  }

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/viewing',
      tags: ['conversations'],
      summary: 'Tell the team that this member has the conversation open (collision warnings)',
      description: `A realtime-only \`viewing\` event with the member's id and name and an expiry (\`until\`, ${VIEWING_SHOWN_MS / 1000} s on); never a webhook, kept 10 minutes. Send it while the conversation is open and visible, every ${VIEWING_REPEAT_MS / 1000} s; signals closer than ${VIEWING_MIN_INTERVAL_MS / 1000} s apart are answered but not stored.`,
      security: bearer,
      request: { params: viewingParams },
      responses: { 200: jsonAnswer(ViewingAnswer, 'the signal was taken') },
    }),
    async (c) => c.json(await signalViewing(ctx, viewing, await viewer(c, c.req.valid('param').conversationId)), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/conversations/{conversationId}/viewing',
      tags: ['conversations'],
      summary: 'Tell the team that this member closed the conversation',
      description: 'A realtime-only `viewing` event with `left: true` and `until` now: readers stop showing the member at once.',
      security: bearer,
      request: { params: viewingParams },
      responses: { 200: jsonAnswer(ViewingAnswer, 'the signal was taken') },
    }),
    async (c) => c.json(await signalViewing(ctx, viewing, { ...(await viewer(c, c.req.valid('param').conversationId)), left: true }), 200),
  );
}
