// A person's sessions (/v1/me/sessions), sign-in with an operator's link, and what sign-in this server offers.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { clearSessionCookie, optionalPerson, requirePerson, requireSameOrigin } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { answerNewSession, NewSession } from './routes.js';
import { endSessions, listSessions } from './sessions.js';
import { redeemSignInLink, signInLinkAccount } from './sign-in-links.js';

const SessionSchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    last_used_at: z.string().openapi({ description: 'to within 5 minutes' }),
    expires_at: z.string().openapi({ description: '30 days after the last use' }),
    user_agent: z.string().nullable(),
    current: z.boolean().openapi({ description: 'the session of this request' }),
  })
  .openapi('Session');

export function registerSessionRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/auth/methods',
      tags: ['sign-in'],
      summary: 'How people sign in on this server (for the sign-in page)',
      responses: {
        200: jsonAnswer(
          z.object({
            email_code: z.boolean().openapi({ description: 'false without a mail account: ask the operator for a sign-in link' }),
            signup: z.enum(['open', 'closed']),
            message: z.string().nullable().openapi({ description: 'what to tell a person when codes cannot be mailed' }),
          }),
          'the sign-in methods',
        ),
      },
    }),
    (c) =>
      c.json(
        {
          email_code: Boolean(ctx.config.smtp),
          signup: ctx.config.signup === 'open' ? ('open' as const) : ('closed' as const),
          message: ctx.config.smtp
            ? null
            : 'This server cannot mail sign-in codes. Ask its operator for a sign-in link (svc person sign-in-link --email <your address>).',
        },
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/link',
      tags: ['sign-in'],
      summary: 'Exchange a one-time sign-in link for a session',
      description:
        'The operator makes links with `svc person sign-in-link --email …` (and `svc bootstrap` prints one for the first owner): <SVC_PUBLIC_URL>/sign-in/link#<token>, valid 15 minutes, single use. The panel posts the token here; there is no GET that signs in.',
      request: {
        body: jsonBody(
          z
            .object({
              token: z.string().min(1).max(200),
              switch_account: z.boolean().optional().openapi({
                description: 'required when the browser is signed in to another account: a session is never replaced silently',
              }),
            })
            .strict(),
        ),
      },
      responses: {
        200: jsonAnswer(NewSession, 'a session: the token works as a Bearer credential and is also set as a cookie'),
        409: { description: 'signed_in_as_other: the browser is signed in to another account and switch_account is not true' },
      },
    }),
    async (c) => {
      requireSameOrigin(c, ctx);
      const body = c.req.valid('json');
      const current = await optionalPerson(c, ctx);
      return answerNewSession(
        c,
        ctx,
        await redeemSignInLink(ctx, body.token, { userAgent: c.req.header('user-agent'), signedInAs: current?.personId, switchAccount: body.switch_account }),
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/auth/link/account',
      tags: ['sign-in'],
      summary: 'The account a sign-in link is for, without using the link',
      description: 'The panel names the account and asks before it signs in with a link, so a link opened by another site signs nobody in.',
      request: { body: jsonBody(z.object({ token: z.string().min(1).max(200) }).strict()) },
      responses: { 200: jsonAnswer(z.object({ email: z.string() }), 'the account of a live, unused link') },
    }),
    async (c) => {
      requireSameOrigin(c, ctx);
      return c.json({ email: (await signInLinkAccount(ctx, c.req.valid('json').token)).email }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me/sessions',
      tags: ['sign-in'],
      summary: 'The signed-in person’s live sessions, newest first',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ data: z.array(SessionSchema) }), 'sessions') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      return c.json({ data: await listSessions(ctx, person.personId, person.sessionId) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/me/sessions/{sessionId}',
      tags: ['sign-in'],
      summary: 'End one of your sessions (its realtime sockets close at once)',
      security: bearer,
      request: { params: z.object({ sessionId: idParam('sessionId', 'ses_01hxyz') }) },
      responses: { 200: jsonAnswer(z.object({ ended: z.number().int() }), 'ended') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      const id = c.req.valid('param').sessionId;
      const ended = await endSessions(ctx, person.personId, [id]);
      if (id === person.sessionId) clearSessionCookie(c, ctx);
      return c.json({ ended: ended.length }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/me/sessions',
      tags: ['sign-in'],
      summary: 'Sign out everywhere: end every session of yours, this one included',
      security: bearer,
      responses: { 200: jsonAnswer(z.object({ ended: z.number().int() }), 'ended') },
    }),
    async (c) => {
      const person = await requirePerson(c, ctx);
      const ended = await endSessions(ctx, person.personId);
      clearSessionCookie(c, ctx);
      return c.json({ ended: ended.length }, 200);
    },
  );
}
