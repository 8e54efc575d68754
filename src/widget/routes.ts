// The chat widget's visitor API under /v1/widget: public-key addressed, called from the sites the
// channel allows (CORS), with a contact session token as Bearer (or ?token= on the socket).

import { Readable } from 'node:stream';
import { upgradeWebSocket } from '@hono/node-server';
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { describeAgent, locateAddress } from '../analytics/runtime.js';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { clientAddress } from '../http/client-address.js';
import { errorBody } from '../http/errors.js';
import { fileResponse } from '../http/files.js';
import { idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { MINUTE } from '../platform/clock.js';
import { invalid, unauthorized } from '../platform/errors.js';
import { RateLimiter } from '../platform/rate-limit.js';
import { socketEvents } from '../realtime/socket.js';
import { TypingThrottle } from '../typing/service.js';
import {
  chatChannelByKey,
  checkOrigin,
  endContactSession,
  findContactSession,
  listVisitorConversations,
  listVisitorMessages,
  MAX_VISITOR_MESSAGE_CHARS,
  openContactSession,
  openVisitorAttachment,
  postVisitorMessage,
  rateVisitorConversation,
  requireVisitorOrigin,
  startVisitorConversation,
  uploadVisitorAttachment,
  type VisitorSession,
  visitorRating,
  visitorTyping,
  widgetConfig,
} from './service.js';
import { VisitorStream } from './stream.js';

const visitorAuth = [{ visitor: [] as string[] }];

const VisitorAttachment = z
  .object({
    id: z.string(),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int(),
    url: z.string().openapi({ description: 'download with the session token as Bearer' }),
  })
  .openapi('VisitorAttachment');
const VisitorMessage = z
  .object({
    id: z.string(),
    conversation_id: z.string(),
    direction: z.enum(['in', 'out']),
    author: z.object({
      type: z.enum(['contact', 'team']),
      name: z.string().nullable().openapi({ description: 'a team member’s first name (null for the visitor, and for replies without a member)' }),
    }),
    body: z.string(),
    html: z.string().nullable().openapi({
      description:
        'the message formatted (bold, italic, links, lists, quotes, code; sanitized, links open in a new tab with rel="noopener nofollow noreferrer"); null when it is plain text. A visitor’s **bold**, *italic* or _italic_, `code`, "- " and "1. " lists, "> " quotes and web addresses are formatted.',
    }),
    attachments: z.array(VisitorAttachment),
    created_at: z.string(),
  })
  .openapi('VisitorMessage');
const VisitorConversation = z
  .object({
    id: z.string(),
    status: z.enum(['open', 'pending', 'closed']),
    subject: z.string().nullable(),
    created_at: z.string(),
    last_message_at: z.string(),
    latest: z
      .object({
        text: z.string().openapi({ description: 'the start of the message, on one line (at most 200 characters)' }),
        from: z.enum(['contact', 'team']),
      })
      .nullable()
      .openapi({ description: 'the latest message the visitor can read (never a note)' }),
  })
  .openapi('VisitorConversation');
const Body = z.object({ body: z.string().min(1).max(MAX_VISITOR_MESSAGE_CHARS) }).strict();

export function registerWidgetRoutes(app: ApiApp, ctx: Ctx) {
  const sessionsPerIp = new RateLimiter(ctx, 'widget_sessions_per_ip', 20, 10 * MINUTE);
  const messagesPerSession = new RateLimiter(ctx, 'widget_messages_per_session', 30, MINUTE);

  // CORS: answers preflights, and lets the page read answers; each route checks the origin itself.
  app.use('/v1/widget/*', async (c, next) => {
    const origin = c.req.header('origin');
    if (c.req.method === 'OPTIONS') {
      return c.body(null, 204, {
        'access-control-allow-origin': origin ?? '*',
        'access-control-allow-methods': 'GET, POST, DELETE',
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
    }
    if (origin) {
      c.header('access-control-allow-origin', origin);
      c.header('vary', 'Origin');
    }
    await next();
  });

  async function visitor(c: Context<AppEnv>): Promise<VisitorSession> {
    const header = c.req.header('authorization');
    const token = header ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
    const found = token ? await findContactSession(ctx, token) : undefined;
    if (!found) throw unauthorized('missing, unknown or expired visitor session; open one with POST /v1/widget/sessions');
    requireVisitorOrigin(found, c.req.header('origin'));
    return found;
  }

  app.openAPIRegistry.registerComponent('securitySchemes', 'visitor', { type: 'http', scheme: 'bearer', description: 'a visitor session token (svc_cs_…)' });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget/config',
      tags: ['widget'],
      summary: 'What the widget shows before a visitor writes',
      request: { query: z.object({ public_key: z.string().min(1).max(100) }) },
      responses: {
        200: jsonAnswer(
          z.object({
            channel: z.object({ name: z.string(), greeting: z.string().nullable(), allow_anonymous: z.boolean(), ask_email_offline: z.boolean() }),
            inbox: z.object({
              name: z.string(),
              mode: z.enum(['live', 'async']),
              expected_reply_minutes: z.number().nullable(),
              timezone: z.string(),
              locale: z.string(),
            }),
            team_online: z.boolean(),
            analytics: z
              .object({ domain: z.string() })
              .nullable()
              .openapi({ description: 'the analytics property of this page (linked to the channel): widget.js counts its pageviews, no /a.js needed' }),
            hours: z
              .object({ open_now: z.boolean(), next_opening: z.string().nullable() })
              .openapi({ description: 'the inbox’s business hours: open now, or when it opens next (null when always open or never)' }),
          }),
          'the widget settings',
        ),
      },
    }),
    async (c) => {
      const channel = await chatChannelByKey(ctx, c.req.valid('query').public_key);
      checkOrigin(channel, c.req.header('origin'));
      return c.json(await widgetConfig(ctx, channel, c.req.header('origin')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget/sessions',
      tags: ['widget'],
      summary: 'Open a visitor session (expires 7 days after last use)',
      description:
        'Anonymous when the channel allows it; with an e-mail address; or with external_id and identity_hash (hex HMAC-SHA256 of the external id under the inbox identity secret), which lets the session read all of that contact’s conversations in the inbox. Other sessions read only the conversations they started.',
      request: {
        body: jsonBody(
          z
            .object({
              public_key: z.string().min(1).max(100),
              email: z.string().min(3).max(254).optional(),
              name: z.string().max(200).optional(),
              external_id: z.string().min(1).max(200).optional(),
              identity_hash: z.string().max(200).optional(),
              page_url: z
                .string()
                .max(2000)
                .url()
                .refine((u) => /^https?:\/\//i.test(u), 'an http(s) URL')
                .optional()
                .openapi({
                  description:
                    'the page the visitor chats from; an anonymous visitor’s new contact keeps it (visitor_page), with visitor_browser, visitor_country and visitor_city from the request',
                }),
            })
            .strict(),
        ),
      },
      responses: {
        201: jsonAnswer(
          z.object({ token: z.string(), contact_id: z.string(), verified: z.boolean(), expires_at: z.string() }),
          'the session token, shown once',
        ),
        429: { description: 'rate_limited: too many sessions from this address' },
      },
    }),
    async (c) => {
      const address = clientAddress(c, ctx.config.clientAddress);
      await sessionsPerIp.hit(address, 'too many visitor sessions from this address; try again later');
      const b = c.req.valid('json');
      const place = locateAddress(ctx, address);
      const opened = await openContactSession(ctx, {
        publicKey: b.public_key,
        origin: c.req.header('origin'),
        visitor: { page: b.page_url, browser: describeAgent(c.req.header('user-agent')), country: place.country, city: place.city },
        email: b.email,
        name: b.name,
        externalId: b.external_id,
        identityHash: b.identity_hash,
      });
      return c.json(
        { token: opened.token, contact_id: opened.contact.contact.id, verified: opened.session.verified === 1, expires_at: opened.session.expires_at },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/widget/session',
      tags: ['widget'],
      summary: 'End this visitor session',
      security: visitorAuth,
      responses: { 204: noContent('ended') },
    }),
    async (c) => {
      const v = await visitor(c);
      await endContactSession(ctx, v.session.id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget/conversations',
      tags: ['widget'],
      summary: 'The conversations this session may read, latest activity first',
      security: visitorAuth,
      responses: { 200: jsonAnswer(z.object({ data: z.array(VisitorConversation) }), 'conversations') },
    }),
    async (c) => c.json({ data: await listVisitorConversations(ctx, await visitor(c)) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget/conversations',
      tags: ['widget'],
      summary: 'Start a conversation with a first message',
      security: visitorAuth,
      request: { body: jsonBody(Body.extend({ subject: z.string().max(200).optional() }).strict()) },
      responses: { 201: jsonAnswer(z.object({ conversation: VisitorConversation, message: VisitorMessage }), 'the new conversation') },
    }),
    async (c) => {
      const v = await visitor(c);
      await messagesPerSession.hit(v.session.id, 'too many messages; slow down');
      const client = { address: clientAddress(c, ctx.config.clientAddress), userAgent: c.req.header('user-agent'), gpc: c.req.header('sec-gpc') === '1' };
      return c.json(await startVisitorConversation(ctx, v, c.req.valid('json'), client), 201);
    },
  );

  const conversationParam = z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget/conversations/{conversationId}/messages',
      tags: ['widget'],
      summary: 'Messages of a conversation, oldest first (never notes or internal events)',
      security: visitorAuth,
      request: {
        params: conversationParam,
        query: z.object({ after: z.string().max(100).optional(), limit: z.coerce.number().int().min(1).max(200).optional() }),
      },
      responses: { 200: jsonAnswer(z.object({ data: z.array(VisitorMessage) }), 'messages') },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const data = await listVisitorMessages(ctx, await visitor(c), c.req.valid('param').conversationId, { after: q.after, limit: q.limit ?? 100 });
      return c.json({ data }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget/conversations/{conversationId}/messages',
      tags: ['widget'],
      summary: 'Write in a conversation (a closed one reopens)',
      security: visitorAuth,
      request: {
        params: conversationParam,
        body: jsonBody(
          z
            .object({
              body: z.string().max(MAX_VISITOR_MESSAGE_CHARS),
              attachment_ids: z
                .array(z.string().max(100))
                .max(10)
                .optional()
                .openapi({ description: 'this session’s uploads to the conversation (the body may then be empty)' }),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(VisitorMessage, 'the message'), 429: { description: 'rate_limited: too many messages in this session' } },
    }),
    async (c) => {
      const v = await visitor(c);
      await messagesPerSession.hit(v.session.id, 'too many messages; slow down');
      return c.json(await postVisitorMessage(ctx, v, c.req.valid('param').conversationId, c.req.valid('json')), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget/conversations/{conversationId}/attachments',
      tags: ['widget'],
      summary: 'Upload a file (raw request body, its type in Content-Type) to send with a message by id',
      description:
        'At most SVC_ATTACHMENT_MAX_BYTES (413 too_large otherwise); uploads never sent are removed after a day. Unsent uploads are limited per session (SVC_WIDGET_UPLOAD_SESSION_BYTES) and per client address (SVC_WIDGET_UPLOAD_ADDRESS_BYTES), and uploads per workspace per 24 hours (SVC_WIDGET_UPLOAD_WORKSPACE_DAILY_BYTES): beyond them 429 upload_quota_exceeded with quota, limit_bytes and Retry-After.',
      security: visitorAuth,
      request: {
        params: conversationParam,
        query: z.object({ filename: z.string().min(1).max(255).optional() }),
        body: { content: { '*/*': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
      },
      responses: {
        201: jsonAnswer(VisitorAttachment, 'the stored upload'),
        413: { description: 'too_large' },
        429: { description: 'rate_limited (uploads too fast), or upload_quota_exceeded' },
      },
    }),
    async (c) => {
      const v = await visitor(c);
      await messagesPerSession.hit(v.session.id, 'too many uploads; slow down');
      const body = c.req.raw.body;
      if (!body) throw invalid('the request has no body');
      const declared = Number(c.req.header('content-length'));
      try {
        const stored = await uploadVisitorAttachment(ctx, v, c.req.valid('param').conversationId, {
          filename: c.req.valid('query').filename,
          contentType: c.req.header('content-type'),
          data: Readable.fromWeb(body as never),
          address: clientAddress(c, ctx.config.clientAddress),
          declaredBytes: Number.isFinite(declared) ? declared : undefined,
        });
        return c.json(stored, 201);
      } catch (error) {
        // A refusal leaves the rest of the body unread, so the connection cannot carry another request.
        c.header('connection', 'close');
        throw error;
      }
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget/attachments/{attachmentId}/content',
      tags: ['widget'],
      summary: 'Download a file of a message this session may read',
      security: visitorAuth,
      request: { params: z.object({ attachmentId: idParam('attachmentId', 'att_01hxyz') }) },
      responses: { 200: { description: 'the file', content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } } } },
    }),
    async (c) => {
      const { row, stream } = await openVisitorAttachment(ctx, await visitor(c), c.req.valid('param').attachmentId);
      const answer = fileResponse(c, stream, { contentType: row.content_type, size: row.size, filename: row.filename });
      const origin = c.req.header('origin');
      if (origin) {
        answer.headers.set('access-control-allow-origin', origin);
        answer.headers.set('vary', 'Origin');
      }
      return answer as never;
    },
  );

  const VisitorRating = z
    .object({
      asked: z.boolean().openapi({ description: 'the team asks for a rating of this (closed) conversation and none was given yet' }),
      rating: z.object({ score: z.number().int(), comment: z.string().nullable() }).nullable(),
    })
    .openapi('VisitorRating');
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widget/conversations/{conversationId}/rating',
      tags: ['widget'],
      summary: 'Whether to ask for a satisfaction rating, and the rating given',
      security: visitorAuth,
      request: { params: conversationParam },
      responses: { 200: jsonAnswer(VisitorRating, 'the rating state') },
    }),
    async (c) => c.json(await visitorRating(ctx, await visitor(c), c.req.valid('param').conversationId), 200),
  );
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget/conversations/{conversationId}/rating',
      tags: ['widget'],
      summary: 'Rate a closed chat conversation from 1 to 5 (once), with an optional comment',
      security: visitorAuth,
      request: {
        params: conversationParam,
        body: jsonBody(z.object({ score: z.number().int().min(1).max(5), comment: z.string().max(2000).optional() }).strict()),
      },
      responses: { 200: jsonAnswer(VisitorRating, 'recorded'), 409: { description: 'no_rating_request, or rating_already_recorded' } },
    }),
    async (c) => c.json(await rateVisitorConversation(ctx, await visitor(c), c.req.valid('param').conversationId, c.req.valid('json')), 200),
  );

  const typing = new TypingThrottle();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widget/conversations/{conversationId}/typing',
      tags: ['widget'],
      summary: 'The visitor is writing (the team sees "typing"); send it every few seconds while writing',
      security: visitorAuth,
      request: { params: conversationParam },
      responses: { 200: jsonAnswer(z.object({ stored: z.boolean() }), 'the signal was taken (signals closer than 2.5 s apart are not stored)') },
    }),
    async (c) => c.json(await visitorTyping(ctx, await visitor(c), c.req.valid('param').conversationId, typing), 200),
  );

  const afterParam = z.coerce.number().int().min(0).optional();
  app.get(
    '/v1/widget/realtime',
    upgradeWebSocket(async (c) => {
      const token = c.req.query('token') ?? '';
      const found = await findContactSession(ctx, token);
      if (!found) throw unauthorized('missing, unknown or expired visitor session');
      requireVisitorOrigin(found, c.req.header('origin'));
      const after = afterParam.safeParse(c.req.query('after') || undefined);
      if (!after.success) throw invalid('after must be a sequence number');
      return socketEvents(ctx, 'widget', 'widget stream failed', (ws) => new VisitorStream(ctx, ws, found, { after: after.data }));
    }),
    (c) => c.json(errorBody('upgrade_required', 'GET /v1/widget/realtime is a WebSocket'), 426),
  );
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/v1/widget/realtime',
    tags: ['widget'],
    summary: 'A visitor’s realtime socket (WebSocket); the contact counts as online while it is open',
    description:
      'Pass the session token as ?token= (browsers cannot set headers on a WebSocket). Frames are JSON: hello {cursor, heartbeat_seconds}; message {seq, message} for the team’s replies and the visitor’s own messages; conversation {seq, conversation: {id, status}}; typing {seq, conversation_id, until} while a team member writes; resync {cursor} when events were missed (reload the conversations). Resume with ?after=<seq>.',
    request: { query: z.object({ token: z.string(), after: afterParam }) },
    responses: { 101: { description: 'switching to the WebSocket protocol' }, 426: { description: 'not a WebSocket request' } },
  });
}
