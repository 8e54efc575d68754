import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import { ContactSchema } from '../contacts/format.js';
import type { Ctx } from '../context.js';
import { ConversationSchema, MessageSchema } from '../conversations/format.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, freeJsonObject, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { createFeedback, MAX_FEEDBACK_CHARS, MAX_METADATA_BYTES } from './service.js';

export function registerFeedbackRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/feedback',
      tags: ['feedback'],
      summary: 'Send feedback: starts a feedback conversation in the inbox (emits feedback.created)',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              inbox_id: z.string().min(1).max(100),
              contact: z
                .object({
                  id: z.string().max(100).optional(),
                  email: z.string().max(254).optional(),
                  external_id: z.string().min(1).max(255).optional().openapi({ description: 'your backend’s id of the person, per inbox' }),
                  name: textUpTo(200).optional(),
                })
                .strict()
                .optional()
                .openapi({ description: 'who sent it: a contact id, an external id, an address, or nothing for anonymous feedback' }),
              subject: z.string().max(998).optional(),
              body: textUpTo(MAX_FEEDBACK_CHARS, 1),
              metadata: freeJsonObject(MAX_METADATA_BYTES, 'free details (app version, page, rating…)').optional(),
            })
            .strict(),
        ),
      },
      responses: {
        201: jsonAnswer(z.object({ conversation: ConversationSchema, message: MessageSchema, contact: ContactSchema }), 'the feedback conversation'),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      const result = await createFeedback(ctx, access, {
        inboxId: b.inbox_id,
        contact: b.contact ? { id: b.contact.id, email: b.contact.email, externalId: b.contact.external_id, name: b.contact.name } : undefined,
        subject: b.subject,
        body: b.body,
        metadata: b.metadata,
      });
      return c.json(result, 201);
    },
  );
}
