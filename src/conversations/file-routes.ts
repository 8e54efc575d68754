// The stored parts of a conversation's messages: the original mail (.eml), the formatted mail as
// its own page, and attachments (upload, metadata, content).
import { Readable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import type { Access } from '../auth/access.js';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { fileResponse } from '../http/files.js';
import { bearer, idParam, jsonAnswer } from '../http/openapi.js';
import { invalid, notFound } from '../platform/errors.js';
import { getAttachmentFor, openAttachment, openRawEmail, uploadAttachment } from './attachments.js';
import { AttachmentSchema, formatAttachment } from './format.js';
import { htmlPage, htmlPageHeaders, inlineParts } from './html-page.js';
import { uploadToInbox } from './inbox-uploads.js';
import { getConversationFor } from './service.js';
import { attachmentsOf, findMessage } from './store.js';

const conversationParams = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });
const messageParams = conversationParams.extend({ messageId: idParam('messageId', 'm_01hxyz') });

/** A message of a conversation the caller reaches (404 otherwise). */
export async function messageFor(ctx: Ctx, access: Access, p: { conversationId: string; messageId: string }) {
  const conversation = await getConversationFor(ctx, access, p.conversationId);
  const message = await findMessage(ctx.db, conversation.id, p.messageId);
  if (!message) throw notFound('message');
  return { conversation, message };
}

export function registerMessageFileRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/messages/{messageId}/raw',
      tags: ['conversations'],
      summary: 'The original e-mail (.eml) of an inbound message',
      security: bearer,
      request: { params: messageParams },
      responses: { 200: { description: 'message/rfc822', content: { 'message/rfc822': { schema: z.string().openapi({ format: 'binary' }) } } } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const p = c.req.valid('param');
      const raw = await openRawEmail(ctx, access, p.conversationId, p.messageId);
      return fileResponse(c, raw.stream, { contentType: 'message/rfc822', size: raw.size, filename: `${p.messageId}.eml` }) as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/messages/{messageId}/html',
      tags: ['conversations'],
      summary: 'The sanitized HTML of a message as a page for a sandboxed frame (remote images only when asked)',
      description:
        'No scripts, forms or plugins run (CSP sandbox); inline images (cid:) are the message’s own parts (small raster images as data: URLs, others their attachment URL); images from elsewhere load only with remote_images=true, so opening a mail tells its sender nothing until the reader asks.',
      security: bearer,
      request: { params: messageParams, query: z.object({ remote_images: z.enum(['true', 'false']).optional() }) },
      responses: { 200: { description: 'text/html', content: { 'text/html': { schema: z.string() } } } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const p = c.req.valid('param');
      const { message } = await messageFor(ctx, access, p);
      if (!message.html) throw notFound('HTML of this message');
      const files = (await attachmentsOf(ctx.db, [message.id])).get(message.id) ?? [];
      const html = await inlineParts(ctx, message.html, files);
      return c.body(htmlPage(html), 200, htmlPageHeaders(c.req.valid('query').remote_images === 'true')) as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/attachments',
      tags: ['conversations'],
      summary: 'Upload a file (raw request body, its type in Content-Type) to send with a message by id',
      security: bearer,
      request: {
        params: conversationParams,
        query: z.object({ filename: z.string().min(1).max(255).optional() }),
        body: { content: { '*/*': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
      },
      responses: { 201: jsonAnswer(AttachmentSchema, 'the stored upload; unsent uploads are removed after a day') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const body = c.req.raw.body;
      if (!body) throw invalid('the request has no body');
      const row = await uploadAttachment(ctx, access, c.req.valid('param').conversationId, {
        filename: c.req.valid('query').filename,
        contentType: c.req.header('content-type'),
        data: Readable.fromWeb(body as never),
      });
      return c.json(formatAttachment(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/inboxes/{inboxId}/attachments',
      tags: ['conversations'],
      summary: 'Upload a file (raw request body) for a conversation not started yet: POST /v1/conversations sends it by id',
      security: bearer,
      request: {
        params: z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') }),
        query: z.object({ filename: z.string().min(1).max(255).optional() }),
        body: { content: { '*/*': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
      },
      responses: { 201: jsonAnswer(AttachmentSchema, 'the stored upload (same limits as a reply’s); unsent uploads are removed after a day') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const body = c.req.raw.body;
      if (!body) throw invalid('the request has no body');
      const row = await uploadToInbox(ctx, access, c.req.valid('param').inboxId, {
        filename: c.req.valid('query').filename,
        contentType: c.req.header('content-type'),
        data: Readable.fromWeb(body as never),
      });
      return c.json(formatAttachment(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/attachments/{attachmentId}',
      tags: ['conversations'],
      summary: 'An attachment’s details',
      security: bearer,
      request: { params: z.object({ attachmentId: idParam('attachmentId', 'att_01hxyz') }) },
      responses: { 200: jsonAnswer(AttachmentSchema, 'the attachment') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(formatAttachment(await getAttachmentFor(ctx, access, c.req.valid('param').attachmentId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/attachments/{attachmentId}/content',
      tags: ['conversations'],
      summary: 'Download an attachment',
      security: bearer,
      request: { params: z.object({ attachmentId: idParam('attachmentId', 'att_01hxyz') }) },
      responses: { 200: { description: 'the file', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const row = await getAttachmentFor(ctx, access, c.req.valid('param').attachmentId);
      const stream = await openAttachment(ctx, row);
      return fileResponse(c, stream, { contentType: row.content_type, size: row.size, filename: row.filename }) as never;
    },
  );
}
