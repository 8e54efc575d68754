// Routes of the mail the team writes besides replies (issue 33): forwarding a message and starting a
// conversation by writing. The services are ./forward.ts and ./start-by-mail.ts.
import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { htmlNestsDeeperThan, MAX_HTML_CHARS, MAX_HTML_DEPTH } from '../mail/html-limits.js';
import { ConversationSchema, MessageSchema } from './format.js';
import { forwardMessage } from './forward.js';
import { MAX_API_BODY_CHARS } from './messages.js';
import { MAX_RECIPIENTS } from './participants.js';
import { cancelScheduledMessage, rescheduleMessage } from './send-later.js';
import { MAX_SUBJECT_LENGTH } from './service.js';
import { startConversationByMail } from './start-by-mail.js';

const recipients = (what: string) =>
  z
    .array(z.string().max(500))
    // The limit of 50 is checked after the caller is authorized (400 naming the field); this bounds the shape.
    .max(20 * MAX_RECIPIENTS)
    .openapi({ description: `${what}: each \`addr\` or \`Name <addr>\`; at most ${MAX_RECIPIENTS} in to, cc and bcc together` });

const html = z
  .string()
  .max(MAX_HTML_CHARS)
  .refine((h) => !htmlNestsDeeperThan(h), `html must not nest elements deeper than ${MAX_HTML_DEPTH} levels`);

const memberId = z.string().max(100).optional().openapi({ description: 'API keys: write on behalf of this member' });
const sendAt = z
  .string()
  .max(40)
  .optional()
  .openapi({ description: 'send later / undo send: an ISO 8601 time in the future (at most 366 days); held as status scheduled until then' });

const ForwardSchema = z
  .object({
    message_id: z.string().min(1).max(100).openapi({ description: 'the message to forward (a message of this conversation, not a note)' }),
    to: recipients('To (at least one)'),
    cc: recipients('Cc').optional(),
    bcc: recipients('Bcc (never in events or webhooks)').optional(),
    body: textUpTo(MAX_API_BODY_CHARS).optional().openapi({ description: 'a note above the forwarded message (plain text)' }),
    html: html.optional().openapi({ description: 'the note as formatted text (sanitized; the plain text is made from it)' }),
    include_attachments: z
      .boolean()
      .optional()
      .openapi({ description: 'copy the message’s attachments into the forward (default true; inline images always)' }),
    member_id: memberId,
    send_at: sendAt,
    attachment_ids: z
      .array(z.string().max(100))
      .max(100)
      .optional()
      .openapi({ description: 'files uploaded to this conversation first (pictures the note shows go in place), sent with the forward' }),
  })
  .strict();

const Address = z.object({ name: z.string().nullable(), address: z.string() });
const CancelledSchema = z
  .object({
    id: z.string(),
    body: z.string(),
    html: z.string().nullable(),
    to: z.array(Address),
    cc: z.array(Address),
    bcc: z.array(Address),
    attachment_ids: z.array(z.string()),
    conversation_removed: z.boolean().openapi({
      description:
        'the first message of a conversation the team started: the conversation, never announced, is removed too; its files are uploads of the inbox again',
    }),
  })
  .openapi('CancelledMessage');

const StartSchema = z
  .object({
    inbox_id: z.string().min(1).max(100),
    channel_id: z.string().max(100).optional().openapi({ description: 'an e-mail channel of the inbox (default the inbox’s first)' }),
    to: recipients(
      'To (at least one); each also may be a contact id (ct_…), written to at its first address. The first is the conversation’s contact (an unknown address makes one)',
    ),
    cc: recipients('Cc').optional(),
    bcc: recipients('Bcc (never a participant, never in events or webhooks)').optional(),
    subject: z.string().max(MAX_SUBJECT_LENGTH),
    body: textUpTo(MAX_API_BODY_CHARS).optional().openapi({ description: 'plain text; required unless html is given' }),
    html: html.optional().openapi({ description: 'formatted text (sanitized; mailed as multipart/alternative)' }),
    member_id: memberId,
    send_at: sendAt,
    attachment_ids: z
      .array(z.string().max(100))
      .max(100)
      .optional()
      .openapi({ description: 'files uploaded to the inbox first (POST /v1/inboxes/{inboxId}/attachments), sent with the first message' }),
  })
  .strict();

export function registerComposeRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations',
      tags: ['conversations'],
      summary: 'Start an e-mail conversation by writing (status pending; the first message is mailed)',
      description:
        'Creates the conversation with the first To as its contact and every To and Cc as participants, sends the first message through the channel (retried as replies are) and records conversation.created and message.created. The customer’s answer threads into it.',
      security: bearer,
      request: { body: jsonBody(StartSchema) },
      responses: {
        201: jsonAnswer(z.object({ conversation: ConversationSchema, message: MessageSchema }), 'the new conversation and its first message (status pending)'),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      const out = await startConversationByMail(ctx, access, {
        inboxId: b.inbox_id,
        channelId: b.channel_id,
        to: b.to,
        cc: b.cc,
        bcc: b.bcc,
        subject: b.subject,
        body: b.body,
        html: b.html,
        memberId: b.member_id,
        sendAt: b.send_at,
        attachmentIds: b.attachment_ids,
      });
      return c.json(out, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/forward',
      tags: ['conversations'],
      summary: 'Forward a message by mail (Fwd: subject, the original’s headers quoted, its attachments copied)',
      description:
        'A new outbound message in this conversation (details.forward names the original), mailed once through the inbox’s e-mail channel with retries. Answers to it thread back into this conversation. Forward recipients do not become participants. A chat message can be forwarded when the inbox has an e-mail channel (409 no_email_channel otherwise).',
      security: bearer,
      request: { params: z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') }), body: jsonBody(ForwardSchema) },
      responses: { 201: jsonAnswer(MessageSchema, 'the forward (status pending)') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      const message = await forwardMessage(ctx, access, c.req.valid('param').conversationId, {
        messageId: b.message_id,
        to: b.to,
        cc: b.cc,
        bcc: b.bcc,
        body: b.body,
        html: b.html,
        includeAttachments: b.include_attachments,
        attachmentIds: b.attachment_ids,
        memberId: b.member_id,
        sendAt: b.send_at,
      });
      return c.json(message, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/conversations/{conversationId}/messages/{messageId}/schedule',
      tags: ['conversations'],
      summary: 'Cancel a scheduled message (undo send, send later) before it is sent',
      description:
        'The message (status scheduled) is removed and nothing is mailed; its text, recipients and files (back among the conversation’s uploads) are returned for the composer. 409 message_state once it was handed to sending.',
      security: bearer,
      request: { params: z.object({ conversationId: idParam('conversationId', 'cv_01hxyz'), messageId: idParam('messageId', 'm_01hxyz') }) },
      responses: { 200: jsonAnswer(CancelledSchema, 'what the message said') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const p = c.req.valid('param');
      return c.json(await cancelScheduledMessage(ctx, access, p.conversationId, p.messageId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/conversations/{conversationId}/messages/{messageId}/schedule',
      tags: ['conversations'],
      summary: 'Move a scheduled message to another time',
      description: 'Sooner or later, until it is handed to sending (then 409 message_state). Its text is changed by cancelling it and writing it again.',
      security: bearer,
      request: {
        params: z.object({ conversationId: idParam('conversationId', 'cv_01hxyz'), messageId: idParam('messageId', 'm_01hxyz') }),
        body: jsonBody(z.object({ send_at: z.string().max(40).openapi({ description: 'an ISO 8601 time in the future (at most 366 days)' }) }).strict()),
      },
      responses: { 200: jsonAnswer(MessageSchema, 'the message, scheduled for its new time') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const p = c.req.valid('param');
      return c.json(await rescheduleMessage(ctx, access, p.conversationId, p.messageId, c.req.valid('json').send_at), 200);
    },
  );
}
