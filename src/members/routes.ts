import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { optionalPerson, requireAccess, requireSameOrigin, setSessionCookie } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { formatPerson, PERSON_LOCALES } from '../people/service.js';
import { acceptInvite, createInvite, formatInvite, inviteSummary, listInvites, resendInvite, revokeInvite } from './invites.js';
import { listMembers, removeMember, updateMember } from './service.js';

const RoleSchema = z.enum(['owner', 'admin', 'agent']);
const InboxLimit = z
  .array(z.string().min(1).max(100))
  .max(200)
  .nullable()
  .openapi({ description: 'agents only: the inboxes this agent reaches (null: every inbox), enforced like an API key’s inbox limit' });

export const MemberSchema = z
  .object({
    id: z.string(),
    person_id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    role: RoleSchema,
    inbox_ids: z.array(z.string()).nullable(),
    joined_at: z.string(),
    last_seen_at: z.string().nullable().openapi({ description: 'last request in this workspace, to within 5 minutes' }),
  })
  .openapi('Member');

export const InviteSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: RoleSchema,
    inbox_ids: z.array(z.string()).nullable(),
    status: z.enum(['pending', 'expired', 'accepted', 'revoked']),
    invited_by: z.string().nullable().openapi({ description: 'person id of the member who made it' }),
    created_at: z.string(),
    sent_at: z.string().nullable().openapi({ description: 'when the invite mail last went out; null: never sent' }),
    expires_at: z.string(),
  })
  .openapi('Invite');

const InviteWithLink = InviteSchema.extend({
  url: z.string().openapi({ description: 'the one-time link; in this answer only (never listed again)' }),
  mail_sent: z.boolean().openapi({ description: 'false when the server’s mail account is missing or failed: pass the link on by hand' }),
}).openapi('InviteWithLink');

const memberParam = z.object({ memberId: idParam('memberId', 'mem_01hxyz') });
const inviteParam = z.object({ inviteId: idParam('inviteId', 'inv_01hxyz') });

export function registerMemberRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/members',
      tags: ['members'],
      summary: 'Members of the workspace, in the order they joined',
      description: 'Every member may list them (to assign conversations); so may keys with conversations:read.',
      security: bearer,
      request: { query: listQuery },
      responses: { 200: jsonAnswer(pageSchema(MemberSchema), 'a page of members') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(await listMembers(ctx, access, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/members/{memberId}',
      tags: ['members'],
      summary: 'Change a member’s role or inbox limit (owners and admins; only owners make or unmake owners)',
      description:
        'The last owner cannot be demoted (409 last_owner). Becoming an owner or admin clears an inbox limit. The member’s open realtime sockets close so that they reconnect with the new access.',
      security: bearer,
      request: { params: memberParam, body: jsonBody(z.object({ role: RoleSchema.optional(), inbox_ids: InboxLimit.optional() }).strict()) },
      responses: { 200: jsonAnswer(MemberSchema, 'the member as it is now'), 409: { description: 'last_owner' } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'members:manage');
      const body = c.req.valid('json');
      return c.json(await updateMember(ctx, access, c.req.valid('param').memberId, { role: body.role, inboxIds: body.inbox_ids }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/members/{memberId}',
      tags: ['members'],
      summary: 'Remove a member, or leave the workspace (your own member id)',
      description:
        'Owners and admins remove members; only an owner removes an owner; anyone may remove themselves. The last owner can be neither removed nor leave (409 last_owner). The person’s sessions lose the workspace at once, their realtime sockets close, and their conversations that are not closed become unassigned (one conversation.updated each).',
      security: bearer,
      request: { params: memberParam },
      responses: {
        200: jsonAnswer(z.object({ member_id: z.string(), unassigned_conversations: z.number().int() }), 'removed'),
        409: { description: 'last_owner' },
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(await removeMember(ctx, access, c.req.valid('param').memberId), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/invites',
      tags: ['members'],
      summary: 'Invite someone by e-mail (owners and admins; only owners invite owners)',
      description:
        'Makes a one-time link valid 7 days and mails it from the server’s own account. The answer carries the link (this once; it is stored hashed), with mail_sent false when the mail could not go, so it can be passed on by hand. The link is <SVC_PUBLIC_URL>/invite#<token>; the panel posts the token to POST /v1/invites/accept.',
      security: bearer,
      request: { body: jsonBody(z.object({ email: z.string().min(3).max(254), role: RoleSchema, inbox_ids: InboxLimit.optional() }).strict()) },
      responses: {
        201: jsonAnswer(InviteWithLink, 'the invite with its link'),
        409: { description: 'already_member, or invite_pending (resend or revoke that one)' },
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'members:manage');
      const body = c.req.valid('json');
      const { invite, url, mailSent } = await createInvite(ctx, access, { email: body.email, role: body.role, inboxIds: body.inbox_ids });
      return c.json({ ...formatInvite(invite, ctx.clock.now()), url, mail_sent: mailSent }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/invites',
      tags: ['members'],
      summary: 'Invites not yet accepted or revoked (pending and expired), newest first; never their links',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(InviteSchema) }), 'invites') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const now = ctx.clock.now();
      return c.json({ data: (await listInvites(ctx, access)).map((i) => formatInvite(i, now)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/invites/{inviteId}',
      tags: ['members'],
      summary: 'Revoke an invite; its link stops working',
      security: bearer,
      request: { params: inviteParam },
      responses: { 200: jsonAnswer(InviteSchema, 'the revoked invite') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(formatInvite(await revokeInvite(ctx, access, c.req.valid('param').inviteId), ctx.clock.now()), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/invites/{inviteId}/resend',
      tags: ['members'],
      summary: 'Mail an invite again with a new link, valid 7 more days (the previous link stops working)',
      security: bearer,
      request: { params: inviteParam },
      responses: {
        200: jsonAnswer(InviteWithLink, 'the invite with its new link'),
        409: { description: 'invite_accepted' },
        410: { description: 'invite_revoked' },
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const { invite, url, mailSent } = await resendInvite(ctx, access, c.req.valid('param').inviteId);
      return c.json({ ...formatInvite(invite, ctx.clock.now()), url, mail_sent: mailSent }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/invites/preview',
      tags: ['members'],
      summary: 'What an invite link offers, before accepting it: the workspace, the role and the address',
      description: 'The token in the body, never in the URL. Nothing changes. 404 for an unknown token; 410 invite_used, invite_expired or invite_revoked.',
      security: [{}],
      request: { body: jsonBody(z.object({ token: z.string().min(1).max(200) }).strict()) },
      responses: { 200: jsonAnswer(z.object({ workspace_name: z.string(), role: RoleSchema, email: z.string() }), 'the invite') },
    }),
    async (c) => c.json(await inviteSummary(ctx, c.req.valid('json').token), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/invites/accept',
      tags: ['members'],
      summary: 'Accept an invite with its token',
      description:
        'For a new address: makes the account (whatever SVC_SIGNUP says), joins the workspace and signs in (a session token in the answer and the session cookie). For an address that has an account: the caller must be signed in as that person (401 sign_in_required otherwise; sign in, then accept again). Single use: 410 invite_used, invite_expired or invite_revoked; 404 for an unknown token; 409 invite_for_someone_else when signed in as another person.',
      security: [{}, ...bearer],
      request: {
        body: jsonBody(
          z
            .object({
              token: z.string().min(1).max(200),
              name: textUpTo(200).optional().openapi({ description: 'the new account’s name' }),
              locale: z
                .enum(PERSON_LOCALES)
                .optional()
                .openapi({ description: 'the new account’s panel language (the panel sends the browser’s); an existing account keeps its own' }),
            })
            .strict(),
        ),
      },
      responses: {
        200: jsonAnswer(
          z.object({
            workspace_id: z.string(),
            workspace_name: z.string(),
            member_id: z.string(),
            role: RoleSchema,
            person: z.object({ id: z.string(), email: z.string(), name: z.string().nullable(), locale: z.string(), created_at: z.string() }),
            token: z.string().optional().openapi({ description: 'a new session (new accounts only), also set as the cookie' }),
            expires_at: z.string().optional(),
          }),
          'joined',
        ),
        401: { description: 'sign_in_required: the address has an account; sign in as that person, then accept again' },
        409: { description: 'already_member, or invite_for_someone_else: signed in as another person' },
        410: { description: 'invite_used, invite_expired or invite_revoked' },
      },
    }),
    async (c) => {
      // The answer can set a session cookie: only the panel's own pages may ask for it.
      requireSameOrigin(c, ctx);
      const signedIn = await optionalPerson(c, ctx);
      const body = c.req.valid('json');
      const r = await acceptInvite(ctx, { token: body.token, name: body.name, locale: body.locale, signedIn, userAgent: c.req.header('user-agent') });
      if (r.session) setSessionCookie(c, ctx, r.session.token, r.session.expiresAt);
      return c.json(
        {
          workspace_id: r.workspace.id,
          workspace_name: r.workspace.name,
          member_id: r.memberId,
          role: r.role,
          person: formatPerson(r.person),
          ...(r.session ? { token: r.session.token, expires_at: r.session.expiresAt } : {}),
        },
        200,
      );
    },
  );
}
