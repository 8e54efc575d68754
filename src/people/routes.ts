import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { clearSessionCookie, requirePerson, requireSameOrigin, setSessionCookie } from '../http/auth.js';
import { bearer, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { invalid } from '../platform/errors.js';
import {
  deletePerson,
  findPersonByEmail,
  formatPerson,
  membershipsOf,
  normalizeEmail,
  PERSON_LOCALES,
  PERSON_NAME_MAX,
  type PersonRow,
  requestSignInCode,
  UNDO_SEND_DEFAULT_SECONDS,
  UNDO_SEND_MAX_SECONDS,
  updatePerson,
  verifySignInCode,
} from './service.js';
import { endSessions } from './sessions.js';

const Email = z.string().min(3).max(254).openapi({ example: 'ada@example.com' });
const Person = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  locale: z.string(),
  undo_send_seconds: z.number().int().openapi({ description: 'undo send: seconds the panel holds a reply before it goes (0 = off)' }),
  created_at: z.string(),
});
const Membership = z.object({
  workspace_id: z.string(),
  workspace_name: z.string(),
  role: z.enum(['owner', 'admin', 'agent']),
  member_id: z.string().openapi({ description: 'the id for /v1/members/{memberId} (DELETE it to leave the workspace)' }),
});
export const NewSession = z.object({ token: z.string(), expires_at: z.string(), person: Person, memberships: z.array(Membership) });

/** Sets the session cookie and answers with the token, the person and their workspaces (every way of signing in). */
export async function answerNewSession(c: Context<AppEnv>, ctx: Ctx, session: { token: string; expiresAt: string; person: PersonRow }) {
  const { token, expiresAt, person } = session;
  setSessionCookie(c, ctx, token, expiresAt);
  return c.json({ token, expires_at: expiresAt, person: formatPerson(person), memberships: await membershipsOf(ctx, person.id) }, 200);
}

export function registerPeopleRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/code',
      tags: ['sign-in'],
      summary: 'Mail a one-time sign-in code',
      description:
        'The answer is the same whether or not the address has an account. A server without a mail account (SVC_SMTP_HOST unset) cannot mail codes and answers 409 mail_not_configured: ask the operator for a sign-in link (svc person sign-in-link).',
      request: { body: jsonBody(z.object({ email: Email })) },
      responses: {
        202: jsonAnswer(z.object({ status: z.literal('sent') }), 'a code was mailed if the address may sign in'),
        409: { description: 'mail_not_configured: this server has no mail account to send codes from; ask the operator for a sign-in link' },
        429: { description: 'rate_limited: too many codes for this address' },
      },
    }),
    async (c) => {
      await requestSignInCode(ctx, c.req.valid('json').email);
      return c.json({ status: 'sent' as const }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/verify',
      tags: ['sign-in'],
      summary: 'Exchange a sign-in code for a session',
      request: { body: jsonBody(z.object({ email: Email, code: z.string().min(1).max(20) })) },
      responses: { 200: jsonAnswer(NewSession, 'a session: the token works as a Bearer credential and is also set as a cookie') },
    }),
    async (c) => {
      requireSameOrigin(c, ctx);
      const { email, code } = c.req.valid('json');
      return answerNewSession(c, ctx, await verifySignInCode(ctx, email, code, { userAgent: c.req.header('user-agent') }));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/signout',
      tags: ['sign-in'],
      summary: 'End this session',
      security: bearer,
      responses: { 204: noContent('signed out') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      await endSessions(ctx, person.personId, [person.sessionId]);
      clearSessionCookie(c, ctx);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me',
      tags: ['sign-in'],
      summary: 'The signed-in person and their workspaces',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ person: Person, memberships: z.array(Membership) }), 'the person') },
    }),
    async (c) => {
      const identity = await requirePerson(c, ctx);
      const person = (await findPersonByEmail(ctx, identity.email))!;
      return c.json({ person: formatPerson(person), memberships: await membershipsOf(ctx, person.id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/me',
      tags: ['sign-in'],
      summary: 'Change the signed-in person’s name or panel language',
      description: `name is trimmed and 1–${PERSON_NAME_MAX} characters; locale is one of ${PERSON_LOCALES.join(', ')}. undo_send_seconds is 0 (off) to 60. A body without any is refused.`,
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              name: z
                .string()
                .max(1000)
                .optional()
                .openapi({ description: `trimmed, 1–${PERSON_NAME_MAX} characters` }),
              locale: z.enum(PERSON_LOCALES).optional(),
              undo_send_seconds: z
                .number()
                .optional()
                .openapi({ description: `undo send: 0 (off) to ${UNDO_SEND_MAX_SECONDS} seconds, default ${UNDO_SEND_DEFAULT_SECONDS}` }),
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(z.object({ person: Person, memberships: z.array(Membership) }), 'the person as they are now') },
    }),
    async (c) => {
      const identity = await requirePerson(c, ctx);
      const person = await updatePerson(ctx, identity.personId, c.req.valid('json'));
      return c.json({ person: formatPerson(person), memberships: await membershipsOf(ctx, person.id) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/me',
      tags: ['sign-in'],
      summary: 'Delete the signed-in account (with its own address as confirmation)',
      description:
        'Deletes the account with its memberships, sessions, passkeys and push subscriptions. Messages the person wrote stay in their conversations without an author. Refused (409 only_owner, listing the workspaces) while the person is the only owner of a workspace.',
      security: bearer,
      request: { body: jsonBody(z.object({ email: Email }).strict()) },
      responses: {
        200: jsonAnswer(
          z.object({
            deleted: z.literal(true),
            person_id: z.string(),
            memberships: z.number(),
            sessions: z.number(),
            passkeys: z.number(),
            push_subscriptions: z.number(),
          }),
          'the account is gone',
        ),
      },
    }),
    async (c) => {
      const identity = await requirePerson(c, ctx);
      let given: string;
      try {
        given = normalizeEmail(c.req.valid('json').email);
      } catch {
        throw invalid('email must be your own address');
      }
      if (given !== identity.email) throw invalid('email must be your own address');
      const result = await deletePerson(ctx, identity.personId);
      clearSessionCookie(c, ctx);
      return c.json({ deleted: true as const, ...result }, 200);
    },
  );
}
