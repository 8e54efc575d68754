import { Readable } from 'node:stream';
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import type { Access } from '../auth/access.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { invalid, notFound } from '../platform/errors.js';
import { getAttachmentFor, openAttachment, openRawEmail, uploadAttachment } from './attachments.js';
import { attachmentUrl, formatAttachment, formatMessage } from './format.js';
import { createTeamMessage, MAX_API_BODY_CHARS } from './messages.js';
import {
  bulkUpdateConversations,
  conversationView,
  getConversationFor,
  listConversations,
  markConversationRead,
  listMessages,
  MAX_BULK,
  MAX_LABELS,
  MAX_LABEL_LENGTH,
  PRIORITIES,
  STATUSES,
  updateConversation,
  type ConversationPatch,
} from './service.js';
import { attachmentsOf, findMessage } from './store.js';
import { retryFailedReply } from '../mail/outbound.js';

export const ConversationSchema = z
  .object({
    id: z.string(),
    inbox_id: z.string(),
    contact_id: z.string(),
    channel_id: z.string().nullable(),
    source: z.enum(['email', 'chat', 'feedback', 'api']),
    status: z.enum(['open', 'pending', 'closed']),
    assignee_id: z.string().nullable(),
    priority: z.enum(['low', 'medium', 'high', 'urgent']).nullable(),
    labels: z.array(z.string()),
    subject: z.string().nullable(),
    spam: z.boolean(),
    imported: z.boolean().openapi({ description: 'copied from an old mailbox by a migration' }),
    created_at: z.string(),
    updated_at: z.string(),
    last_message_at: z.string(),
  })
  .openapi('Conversation');

export const ConversationListItemSchema = ConversationSchema.extend({
  contact: z.object({ id: z.string(), name: z.string().nullable(), email: z.string().nullable() }),
  preview: z.string().nullable().openapi({ description: 'the start of the latest message' }),
  unread: z.boolean().openapi({ description: 'the customer wrote since the calling member last opened it (always false for API keys and imported mail)' }),
}).openapi('ConversationListItem');

export const AttachmentSchema = z
  .object({
    id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    inline: z.boolean(),
    content_id: z.string().nullable(),
    url: z.string().openapi({ description: 'download path (GET, same credentials)' }),
    created_at: z.string(),
  })
  .openapi('Attachment');

const MailAddressSchema = z.object({ name: z.string().nullable(), address: z.string() }).openapi('MailAddress');

export const MailHeadersSchema = z
  .object({
    message_id: z.string().nullable().openapi({ description: 'Message-ID without angle brackets; an imported message keeps its original one' }),
    in_reply_to: z.array(z.string()).openapi({ description: 'Message-IDs of In-Reply-To (usually one)' }),
    references: z.array(z.string()).openapi({ description: 'Message-IDs of References, oldest first (the first and the newest 49 when longer)' }),
    from: MailAddressSchema.nullable(),
    to: z.array(MailAddressSchema),
    cc: z.array(MailAddressSchema),
    subject: z.string().nullable(),
  })
  .openapi('MailHeaders', {
    description: 'the headers an e-mail message was received, sent or imported with, for correlating mail with other systems; null for messages that are not e-mail',
  });

export const MessageSchema = z
  .object({
    id: z.string(),
    conversation_id: z.string(),
    kind: z.enum(['message', 'note', 'event']),
    direction: z.enum(['in', 'out']),
    author: z.object({
      type: z.enum(['contact', 'member', 'api_key', 'system']),
      contact_id: z.string().nullable().optional(),
      member_id: z.string().nullable().optional(),
      api_key_id: z.string().nullable().optional(),
    }),
    subject: z.string().nullable(),
    body: z.string(),
    html: z.string().nullable().openapi({ description: 'sanitized HTML' }),
    automatic: z.boolean().openapi({ description: 'auto-reply, delivery report or bulk mail; never answered automatically' }),
    attachments: z.array(AttachmentSchema),
    attachments_omitted: z.number().int().openapi({ description: 'attachments past the per-message limit, kept only in the original e-mail' }),
    has_original: z.boolean().openapi({ description: 'the original .eml is kept: GET …/messages/{messageId}/raw (retention removes it after retention_days)' }),
    status: z.enum(['pending', 'sent', 'failed']).nullable().openapi({ description: 'mail sent through a channel; failed once the retries are used up' }),
    error: z.string().nullable(),
    sent_at: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable().openapi({ description: 'for kind event: what changed' }),
    email: MailHeadersSchema.nullable(),
    created_at: z.string(),
  })
  .openapi('Message');

const conversationParams = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });
const messageParams = conversationParams.extend({ messageId: idParam('messageId', 'm_01hxyz') });

const PatchSchema = z
  .object({
    status: z.enum(STATUSES as [string, ...string[]]).optional(),
    assignee_id: z.string().max(100).nullable().optional().openapi({ description: 'a member’s person id, or null to unassign' }),
    priority: z.enum(PRIORITIES as [string, ...string[]]).nullable().optional(),
    labels: z.array(z.string().max(MAX_LABEL_LENGTH)).max(MAX_LABELS).optional().openapi({ description: 'replaces the labels' }),
    subject: z.string().max(998).nullable().optional(),
    spam: z.boolean().optional(),
    contact_id: z.string().max(100).optional().openapi({ description: 'move the conversation to another contact' }),
    inbox_id: z.string().max(100).optional().openapi({ description: 'move the conversation to another inbox' }),
  })
  .strict();

function toPatch(b: z.infer<typeof PatchSchema>): ConversationPatch {
  return {
    status: b.status as ConversationPatch['status'],
    assigneeId: b.assignee_id,
    priority: b.priority as ConversationPatch['priority'],
    labels: b.labels,
    subject: b.subject,
    spam: b.spam,
    contactId: b.contact_id,
    inboxId: b.inbox_id,
  };
}

/** Types a browser may show inline; everything else is offered as a download. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf']);

export function contentDisposition(kind: 'inline' | 'attachment', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function fileResponse(c: Context<AppEnv>, stream: Readable, opts: { contentType: string; size: number; filename: string }) {
  const inline = INLINE_TYPES.has(opts.contentType);
  return new Response(Readable.toWeb(stream) as ReadableStream, {
    status: 200,
    headers: {
      'content-type': inline ? opts.contentType : 'application/octet-stream',
      'content-length': String(opts.size),
      'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', opts.filename),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cache-control': 'private, no-store',
      'x-request-id': c.get('requestId'),
    },
  });
}

/** A message of a conversation the caller reaches; 404 for either. */
async function messageFor(ctx: Ctx, access: Access, p: { conversationId: string; messageId: string }) {
  const conversation = await getConversationFor(ctx, access, p.conversationId);
  const message = await findMessage(ctx.db, conversation.id, p.messageId);
  if (!message) throw notFound('message');
  return { conversation, message };
}

export function registerConversationRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations',
      tags: ['conversations'],
      summary: 'Conversations the caller reaches, newest first',
      security: bearer,
      request: {
        query: listQuery.extend({
          inbox_id: z.string().max(100).optional(),
          status: z.enum(['open', 'pending', 'closed']).optional(),
          assignee_id: z.string().max(100).optional().openapi({ description: 'a person id, or none for unassigned' }),
          label: z.string().max(MAX_LABEL_LENGTH).optional(),
          contact_id: z.string().max(100).optional(),
          spam: z.enum(['true', 'false']).optional(),
          imported: z.enum(['true', 'false']).optional(),
          sort: z.enum(['created', 'activity']).optional().openapi({ description: 'created (default): newest first; activity: latest message first' }),
        }),
      },
      responses: { 200: jsonAnswer(pageSchema(ConversationListItemSchema), 'a page of conversations') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const q = c.req.valid('query');
      const page = await listConversations(
        ctx,
        access,
        {
          inboxId: q.inbox_id,
          status: q.status,
          assigneeId: q.assignee_id,
          label: q.label,
          contactId: q.contact_id,
          spam: q.spam === undefined ? undefined : q.spam === 'true',
          imported: q.imported === undefined ? undefined : q.imported === 'true',
        },
        { limit: q.limit, cursor: q.cursor, sort: q.sort },
      );
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}',
      tags: ['conversations'],
      summary: 'One conversation',
      security: bearer,
      request: { params: conversationParams },
      responses: { 200: jsonAnswer(ConversationSchema, 'the conversation') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const row = await getConversationFor(ctx, access, c.req.valid('param').conversationId);
      return c.json(await conversationView(ctx.db, row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/read',
      tags: ['conversations'],
      summary: 'Mark a conversation read for the signed-in member (the panel does when it opens one)',
      security: bearer,
      request: { params: conversationParams },
      responses: { 200: jsonAnswer(z.object({ read_at: z.string() }), 'read now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      return c.json(await markConversationRead(ctx, access, c.req.valid('param').conversationId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/conversations/{conversationId}',
      tags: ['conversations'],
      summary: 'Change status, assignee, priority, labels, subject, spam flag, contact or inbox',
      security: bearer,
      request: { params: conversationParams, body: jsonBody(PatchSchema) },
      responses: { 200: jsonAnswer(ConversationSchema, 'the conversation as it is now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const result = await updateConversation(ctx, access, c.req.valid('param').conversationId, toPatch(c.req.valid('json')));
      return c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/bulk-update',
      tags: ['conversations'],
      summary: `The same changes to up to ${MAX_BULK} conversations at once (one conversation.updated each)`,
      security: bearer,
      request: {
        body: jsonBody(z.object({ conversation_ids: z.array(z.string().max(100)).min(1).max(MAX_BULK), changes: PatchSchema }).strict()),
      },
      responses: { 200: jsonAnswer(z.object({ data: z.array(ConversationSchema) }), 'the conversations as they are now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      return c.json({ data: await bulkUpdateConversations(ctx, access, b.conversation_ids, toPatch(b.changes)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/messages',
      tags: ['conversations'],
      summary: 'Messages, notes and events of a conversation (newest first; order=asc for oldest first)',
      security: bearer,
      request: { params: conversationParams, query: listQuery.extend({ order: z.enum(['asc', 'desc']).optional() }) },
      responses: { 200: jsonAnswer(pageSchema(MessageSchema), 'a page of messages') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const conversation = await getConversationFor(ctx, access, c.req.valid('param').conversationId);
      return c.json(await listMessages(ctx, conversation, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/messages',
      tags: ['conversations'],
      summary: 'Reply (mailed through the conversation’s e-mail channel) or add a note (never mailed)',
      security: bearer,
      request: {
        params: conversationParams,
        body: jsonBody(
          z
            .object({
              kind: z.enum(['message', 'note']).optional().openapi({ description: 'default message' }),
              body: z.string().max(MAX_API_BODY_CHARS),
              html: z.string().max(2 * 1024 * 1024).optional().openapi({ description: 'sanitized before it is stored' }),
              attachment_ids: z.array(z.string().max(100)).max(100).optional().openapi({ description: 'uploads of this conversation' }),
              member_id: z.string().max(100).optional().openapi({ description: 'API keys: write on behalf of this member' }),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(MessageSchema, 'the new message; replies by e-mail start with status pending') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const b = c.req.valid('json');
      const message = await createTeamMessage(ctx, access, c.req.valid('param').conversationId, {
        kind: b.kind ?? 'message',
        body: b.body,
        html: b.html,
        attachmentIds: b.attachment_ids,
        memberId: b.member_id,
      });
      return c.json(message, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/conversations/{conversationId}/messages/{messageId}',
      tags: ['conversations'],
      summary: 'One message (its status shows whether a reply was sent or failed)',
      security: bearer,
      request: { params: messageParams },
      responses: { 200: jsonAnswer(MessageSchema, 'the message') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:read');
      const p = c.req.valid('param');
      const { message } = await messageFor(ctx, access, p);
      const files = await attachmentsOf(ctx.db, [message.id]);
      return c.json(formatMessage(message, files.get(message.id) ?? []), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/messages/{messageId}/retry',
      tags: ['conversations'],
      summary: 'Send a reply whose sending failed once more (a fresh set of attempts)',
      description: '409 message_state unless the message is a reply with status failed.',
      security: bearer,
      request: { params: messageParams },
      responses: { 200: jsonAnswer(MessageSchema, 'the message, pending again') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'conversations:write');
      const p = c.req.valid('param');
      const { conversation, message } = await messageFor(ctx, access, p);
      await retryFailedReply(ctx, message);
      const again = (await findMessage(ctx.db, conversation.id, message.id))!;
      return c.json(formatMessage(again, (await attachmentsOf(ctx.db, [message.id])).get(message.id) ?? []), 200);
    },
  );

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
        'No scripts, forms or plugins run (CSP sandbox); inline images (cid:) point at the message’s attachments; images from elsewhere load only with remote_images=true, so opening a mail tells its sender nothing until the reader asks.',
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
      const byCid = new Map(files.filter((f) => f.content_id).map((f) => [f.content_id!.toLowerCase(), attachmentUrl(f.id)]));
      const html = message.html.replace(/(["'(\s])cid:([^"')\s>]+)/gi, (all, before: string, cid: string) => {
        const url = byCid.get(cid.toLowerCase());
        return url ? `${before}${url}` : all;
      });
      const remote = c.req.valid('query').remote_images === 'true';
      const csp = `default-src 'none'; img-src 'self' data:${remote ? ' https: http:' : ''}; style-src 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-popups allow-popups-to-escape-sandbox`;
      return c.body(`<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><base target="_blank"></head><body>${html}</body></html>`, 200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': csp,
        'x-frame-options': 'SAMEORIGIN',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'private, no-store',
      }) as never;
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
