import { createRoute, z } from '@hono/zod-openapi';
import { authorize, requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess, requireIdentity } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { notFound } from '../platform/errors.js';
import { getWorkspace } from '../workspaces/service.js';
import { unsubscribe } from './feedback.js';
import { REQUEST_FIELD_MAX, requestApproval } from './governance.js';
import { MailerNotifications } from './notifications.js';
import { governanceOverview } from './overview.js';
import {
  addRecipients,
  cancelBroadcast,
  createBroadcast,
  formatBroadcast,
  getBroadcastFor,
  listBroadcasts,
  listRecipients,
  MAX_BODY_CHARS,
  MAX_PER_REQUEST,
  MAX_SUBJECT,
  pauseBroadcast,
  resumeBroadcast,
  scheduleBroadcast,
  updateBroadcast,
} from './service.js';

const PAUSE_REASONS = ['manual', 'workspace_suspended', 'mailer_tenant', 'bounce_rate', 'complaint_rate', 'sender_error'] as const;

export const BroadcastSchema = z
  .object({
    id: z.string(),
    inbox_id: z.string(),
    channel_id: z.string().nullable(),
    subject: z.string(),
    text: z.string(),
    html: z.string().nullable(),
    status: z.enum(['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled']),
    pause_reason: z
      .enum(PAUSE_REASONS)
      .nullable()
      .openapi({ description: 'why it is paused: manual (a member), workspace_suspended, mailer_tenant, bounce_rate, complaint_rate or sender_error' }),
    pause_detail: z.string().nullable(),
    paused_at: z.string().nullable(),
    send_at: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    continues_at: z.string().nullable().openapi({ description: 'set while today’s allowance is used up: when sending continues' }),
    segment_id: z.string().nullable().openapi({ description: 'a contact segment (GET /v1/segments) whose contacts become recipients when sending starts' }),
    segment_resolved_at: z.string().nullable().openapi({ description: 'when the segment’s contacts were added as recipients' }),
    counts: z.object({
      recipients: z.number().int(),
      pending: z.number().int(),
      sent: z.number().int(),
      failed: z.number().int(),
      suppressed: z.number().int().openapi({ description: 'skipped: the address unsubscribed, bounced or complained before' }),
      bounced: z.number().int(),
      complained: z.number().int(),
      unsubscribed: z.number().int(),
    }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Broadcast');

const RecipientSchema = z
  .object({
    seq: z.number().int(),
    email: z.string(),
    contact_id: z.string().nullable(),
    status: z.enum(['pending', 'sending', 'sent', 'failed', 'suppressed']),
    attempts: z.number().int(),
    error: z.string().nullable(),
    sent_at: z.string().nullable(),
    bounced_at: z.string().nullable(),
    complained_at: z.string().nullable(),
    unsubscribed_at: z.string().nullable(),
  })
  .openapi('BroadcastRecipient');

const RecipientsBody = z
  .object({
    emails: z.array(z.string().max(320)).max(MAX_PER_REQUEST).optional(),
    contact_ids: z.array(z.string().max(100)).max(MAX_PER_REQUEST).optional(),
    all_contacts: z.boolean().optional().openapi({ description: 'every contact’s first address (of the contacts the caller reaches)' }),
  })
  .strict()
  .openapi({ description: 'recipients from a list of addresses and/or contacts (their first address); duplicates are dropped' });

const GovernanceSchema = z
  .object({
    workspace: z.object({ id: z.string(), name: z.string(), origin: z.enum(['bootstrap', 'signup']) }),
    mode: z.enum(['on', 'approval']),
    status: z.enum(['allowed', 'approval_required', 'approval_requested', 'approved', 'denied', 'suspended']),
    reason: z.string().nullable(),
    suspended_by: z.enum(['operator', 'automatic']).nullable(),
    decided_at: z.string().nullable(),
    daily: z.object({
      day: z.string(),
      limit: z.number().int(),
      reserved: z.number().int(),
      remaining: z.number().int(),
      parts: z.object({ workspace: z.number().int().nullable(), server: z.number().int().nullable(), warmup: z.number().int() }),
    }),
    last_30_days: z
      .object({ sent: z.number().int(), bounced: z.number().int(), complained: z.number().int(), bounce_rate: z.number(), complaint_rate: z.number() })
      .openapi({ description: 'rates in percent' }),
    sender_domains: z.array(z.string()),
    request: z
      .object({
        email: z.string().nullable(),
        website: z.string().nullable(),
        senders: z.string().nullable(),
        consent: z.string().nullable(),
        requested_at: z.string().nullable(),
      })
      .nullable(),
    latest: z.array(z.record(z.string(), z.unknown())),
  })
  .openapi('BroadcastGovernance');

const segmentIdField = z.string().max(100).nullable().optional().openapi({
  description:
    'a contact segment as the audience: its contacts (their first address) are added as recipients when sending starts; suppressed addresses are skipped as always. Needs a credential that reaches every inbox; null removes it',
});

const broadcastParams = z.object({ broadcastId: idParam('broadcastId', 'bc_01hxyz') });
const serverLimit = { description: 'hosted_limit (SVC_BROADCAST_DAILY_RECIPIENTS): more recipients than a workspace may mail in one day on this server' };

export function registerBroadcastRoutes(app: ApiApp, ctx: Ctx) {
  const notifications = new MailerNotifications(ctx);

  const action = (name: 'pause' | 'resume' | 'cancel', summary: string, run: typeof pauseBroadcast) =>
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/broadcasts/{broadcastId}/${name}`,
        tags: ['broadcasts'],
        summary,
        security: bearer,
        request: { params: broadcastParams },
        responses: { 200: jsonAnswer(BroadcastSchema, 'the broadcast'), ...(name === 'resume' ? { 422: serverLimit } : {}) },
      }),
      async (c) => {
        const access = await requireAccess(c, ctx);
        requireScope(access, 'broadcasts:manage');
        return c.json(formatBroadcast(await run(ctx, access, c.req.valid('param').broadcastId)), 200);
      },
    );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/broadcasts',
      tags: ['broadcasts'],
      summary: 'Broadcasts, latest first',
      security: bearer,
      request: { query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(BroadcastSchema), 'a page of broadcasts') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      return c.json(await listBroadcasts(ctx, access, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/broadcasts',
      tags: ['broadcasts'],
      summary: 'Create a draft broadcast through an inbox’s e-mail channel',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              inbox_id: z.string().max(100),
              channel_id: z.string().max(100).optional().openapi({ description: 'default: the inbox’s only e-mail channel with an SMTP account' }),
              subject: z.string().min(1).max(MAX_SUBJECT),
              text: z
                .string()
                .min(1)
                .max(MAX_BODY_CHARS)
                .openapi({ description: 'plain-text body; {{unsubscribe_url}} is replaced by the recipient’s unsubscribe link' }),
              html: z.string().max(MAX_BODY_CHARS).nullable().optional(),
              recipients: RecipientsBody.optional(),
              segment_id: segmentIdField,
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(BroadcastSchema, 'the draft') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      const b = c.req.valid('json');
      const row = await createBroadcast(ctx, access, {
        inboxId: b.inbox_id,
        channelId: b.channel_id,
        subject: b.subject,
        text: b.text,
        html: b.html,
        recipients: b.recipients ? { emails: b.recipients.emails, contactIds: b.recipients.contact_ids, allContacts: b.recipients.all_contacts } : undefined,
        segmentId: b.segment_id,
      });
      return c.json(formatBroadcast(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/broadcasts/{broadcastId}',
      tags: ['broadcasts'],
      summary: 'One broadcast with its counts',
      security: bearer,
      request: { params: broadcastParams },
      responses: { 200: jsonAnswer(BroadcastSchema, 'the broadcast') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      return c.json(formatBroadcast(await getBroadcastFor(ctx, access, c.req.valid('param').broadcastId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/broadcasts/{broadcastId}',
      tags: ['broadcasts'],
      summary: 'Change a draft',
      security: bearer,
      request: {
        params: broadcastParams,
        body: jsonBody(
          z
            .object({
              channel_id: z.string().max(100).optional(),
              subject: z.string().min(1).max(MAX_SUBJECT).optional(),
              text: z.string().min(1).max(MAX_BODY_CHARS).optional(),
              html: z.string().max(MAX_BODY_CHARS).nullable().optional(),
              segment_id: segmentIdField,
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(BroadcastSchema, 'the draft') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      const b = c.req.valid('json');
      const row = await updateBroadcast(ctx, access, c.req.valid('param').broadcastId, {
        subject: b.subject,
        text: b.text,
        html: b.html,
        channelId: b.channel_id,
        segmentId: b.segment_id,
      });
      return c.json(formatBroadcast(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/broadcasts/{broadcastId}/recipients',
      tags: ['broadcasts'],
      summary: 'Add recipients to a draft (duplicates are dropped)',
      security: bearer,
      request: { params: broadcastParams, body: jsonBody(RecipientsBody) },
      responses: { 200: jsonAnswer(z.object({ added: z.number().int(), recipients: z.number().int() }), 'how many were new, and the total'), 422: serverLimit },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      const b = c.req.valid('json');
      return c.json(
        await addRecipients(ctx, access, c.req.valid('param').broadcastId, { emails: b.emails, contactIds: b.contact_ids, allContacts: b.all_contacts }),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/broadcasts/{broadcastId}/recipients',
      tags: ['broadcasts'],
      summary: 'Recipients in send order (kept 400 days after the broadcast finished)',
      security: bearer,
      request: { params: broadcastParams, query: listQuery.extend({ status: z.enum(['pending', 'sending', 'sent', 'failed', 'suppressed']).optional() }) },
      responses: { 200: jsonAnswer(pageSchema(RecipientSchema), 'a page of recipients') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      return c.json(await listRecipients(ctx, access, c.req.valid('param').broadcastId, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/broadcasts/{broadcastId}/schedule',
      tags: ['broadcasts'],
      summary: 'Schedule a draft: now, or at send_at',
      description:
        '409 broadcasts_not_approved or broadcasts_suspended when the workspace may not send; 409 mailer_tenant_blocked when the inbox’s mail-provider tenant is disabled; 422 hosted_limit (limit SVC_BROADCAST_DAILY_RECIPIENTS) when the broadcast has more recipients than a workspace may mail in one day on this server.',
      security: bearer,
      request: {
        params: broadcastParams,
        body: { content: { 'application/json': { schema: z.object({ send_at: z.iso.datetime({ offset: true }).optional() }).strict() } }, required: false },
      },
      responses: { 200: jsonAnswer(BroadcastSchema, 'the scheduled broadcast'), 422: serverLimit },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      const body = c.req.valid('json') as { send_at?: string };
      return c.json(formatBroadcast(await scheduleBroadcast(ctx, access, c.req.valid('param').broadcastId, body.send_at)), 200);
    },
  );

  action('pause', 'Pause a scheduled or sending broadcast', pauseBroadcast);
  action('resume', 'Resume a paused broadcast (409 when the workspace or the inbox’s tenant may not send)', resumeBroadcast);
  action('cancel', 'Cancel a broadcast; recipients not yet mailed are not mailed', cancelBroadcast);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/workspace/broadcasts',
      tags: ['broadcasts'],
      summary: 'The workspace’s broadcast governance: status and reason, today’s limit and count, 30-day rates (owners, admins, keys with broadcasts:manage)',
      security: bearer,
      responses: { 200: jsonAnswer(GovernanceSchema, 'the governance state') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'broadcasts:manage');
      const overview = await governanceOverview(ctx, await getWorkspace(ctx, access.workspaceId));
      // The operator's reason is shown to the workspace's owners (and to its keys).
      const mayReadReason = access.actor.kind === 'api_key' || access.actor.role === 'owner';
      return c.json({ ...overview, reason: mayReadReason ? overview.reason : null, request: mayReadReason ? overview.request : null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/workspace/broadcasts/approval-request',
      tags: ['broadcasts'],
      summary: 'An owner asks the server operator to approve broadcasts (the operator digest carries it)',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              website: textUpTo(500, 1),
              senders: textUpTo(REQUEST_FIELD_MAX, 1).openapi({ description: 'who sends and what' }),
              consent: textUpTo(REQUEST_FIELD_MAX, 1).openapi({ description: 'how subscribers agreed' }),
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(GovernanceSchema, 'the governance state') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'broadcasts:request_approval');
      const identity = await requireIdentity(c, ctx);
      if (identity.kind !== 'session') throw notFound('session');
      const workspace = await getWorkspace(ctx, access.workspaceId);
      await requestApproval(ctx, workspace, identity.email, c.req.valid('json'));
      return c.json(await governanceOverview(ctx, workspace), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/mailer/notifications',
      tags: ['broadcasts'],
      summary: 'Amazon SNS HTTP(S) endpoint for bounce, complaint and tenant notifications (signed by SNS; topics of SVC_MAILER_TOPIC_ARNS only)',
      // No JSON validation: SNS posts its JSON as text/plain, and the raw body is what is signed.
      request: { body: { content: { 'text/plain': { schema: z.string() } }, required: true } },
      responses: { 200: jsonAnswer(z.object({ result: z.string() }), 'handled') },
    }),
    async (c) => {
      const result = await notifications.handle(await c.req.text());
      return c.json({ result }, 200);
    },
  );

  const unsubscribeParams = z.object({
    token: z
      .string()
      .min(1)
      .max(200)
      .openapi({ param: { name: 'token', in: 'path' } }),
  });
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/unsubscribe/{token}',
      tags: ['broadcasts'],
      summary: 'One-click unsubscribe (RFC 8058, List-Unsubscribe-Post); needs no sign-in',
      request: { params: unsubscribeParams },
      responses: { 200: { description: 'unsubscribed', content: { 'text/html': { schema: z.string() } } } },
    }),
    async (c) => {
      const result = await unsubscribe(ctx, c.req.valid('param').token);
      if (!result.found) return c.html(page('This unsubscribe link is not valid or has expired.'), 404, PAGE_HEADERS);
      return c.html(page('You are unsubscribed and will not get these e-mails again.'), 200, PAGE_HEADERS);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/unsubscribe/{token}',
      tags: ['broadcasts'],
      summary: 'Unsubscribe page with a confirmation button (a GET changes nothing; link scanners follow links)',
      request: { params: unsubscribeParams },
      responses: { 200: { description: 'the page', content: { 'text/html': { schema: z.string() } } } },
    }),
    async (c) => {
      const token = c.req.valid('param').token;
      if (!/^[a-z0-9_-]{1,200}$/i.test(token)) return c.html(page('This unsubscribe link is not valid.'), 404, PAGE_HEADERS);
      return c.html(
        page(
          'Do you want to stop getting these e-mails?',
          `<form method="post" action="/v1/unsubscribe/${token}"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
        ),
        200,
        PAGE_HEADERS,
      );
    },
  );
}

/**
 * The unsubscribe page runs no script and loads nothing; another site may not frame it (a framed
 * button could be clicked for the recipient), and its address (a token) is not sent on as a referrer.
 */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

function page(message: string, extra = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Unsubscribe</title></head><body><p>${message}</p>${extra}</body></html>`;
}
