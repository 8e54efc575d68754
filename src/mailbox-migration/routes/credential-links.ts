// Credentials links (registered with the other migration endpoints): a manager asks for a link to
// the panel page where a person enters the mailbox password (POST /v1/migrations/{id}/credentials-link);
// the page reads what the link is for and puts the password with the link's token. Those two routes
// are under /v1/migration-links, outside /v1/migrations (which is for managers only): they need no
// credentials, the token (in the body, never the URL) is the authority.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../../context.js';
import type { ApiApp } from '../../http/app.js';
import { bearer, jsonAnswer, jsonBody } from '../../http/openapi.js';
import { createCredentialsLink, describeCredentialsLink, startLinkSignIn, useCredentialsLink } from '../sources/credential-links.js';
import { CredentialsSchema, migrationManager, params, TestResultSchema, tags } from './common.js';

const token = z.string().min(1).max(200).openapi({ description: 'the token after #token= in the link' });

export function registerCredentialLinkRoutes(app: ApiApp, ctx: Ctx) {
  const manager = migrationManager(ctx);

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migrations/{migrationId}/credentials-link',
      tags,
      summary:
        'A link to the panel page where a person enters the mailbox password, or signs in to Google or Microsoft (single use, 30 minutes; a new link ends the earlier one)',
      description:
        'For assistants and scripts that must never handle the password. Once a password entered through the link connected, credentials.set is true and the migration is connected.',
      security: bearer,
      request: { params },
      responses: {
        201: jsonAnswer(
          z.object({ migration_id: z.string(), url: z.string(), expires_at: z.string(), single_use: z.boolean(), mailbox: z.string().nullable() }),
          'the link (shown once)',
        ),
      },
    }),
    async (c) => {
      const access = await manager(c);
      return c.json(await createCredentialsLink(ctx, access, c.req.valid('param').migrationId, new URL(c.req.url).origin), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migration-links/{migrationId}/check',
      tags,
      summary: 'What a credentials link is for (the mailbox and provider); 404 when it is unknown, used or expired',
      request: { params, body: jsonBody(z.object({ token }).strict()) },
      responses: {
        200: jsonAnswer(
          z.object({
            migration_id: z.string(),
            provider: z.string(),
            kind: z.enum(['mailbox', 'help_desk', 'sign_in']).openapi({
              description:
                'help_desk: the page asks for the help desk’s API credentials instead of a password; sign_in: the page starts the provider’s sign-in (POST …/sign-in)',
            }),
            mailbox: z.string().nullable(),
            username: z.string().nullable(),
            provider_name: z.string(),
            app_password: z
              .enum(['required', 'with_two_step', 'no'])
              .openapi({ description: 'whether the provider needs an app password (with_two_step: when two-step sign-in is on)' }),
            app_password_url: z.string().nullable(),
            expires_at: z.string(),
          }),
          'the link is live',
        ),
      },
    }),
    async (c) => c.json(await describeCredentialsLink(ctx, c.req.valid('param').migrationId, c.req.valid('json').token), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/migration-links/{migrationId}/sign-in',
      tags,
      summary: 'Start the sign-in of a Google or Microsoft mailbox with a credentials link; answers the provider’s address to open',
      description:
        'The provider sends the browser back to the link’s page with `signed_in=<provider>&connected=1|0` (or `sign_in_error=<code>`); a sign-in that connected uses the link up. 409 `not_sign_in_provider` for mailboxes that take a password.',
      request: { params, body: jsonBody(z.object({ token }).strict()) },
      responses: {
        200: jsonAnswer(z.object({ provider: z.string(), url: z.string(), expires_at: z.string() }), 'the provider’s sign-in address (single use)'),
      },
    }),
    async (c) => c.json(await startLinkSignIn(ctx, c.req.valid('param').migrationId, c.req.valid('json').token), 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/migration-links/{migrationId}/credentials',
      tags,
      summary:
        'Enter the mailbox password (or a help desk’s API credentials) with a credentials link: sealed at once, the connection is tested, and a passing test uses the link up',
      description:
        'The fields and their checks are those of PUT /v1/migrations/{id}/credentials (Zendesk: subdomain, email, api_token; Help Scout: app_id, app_secret). A failed test leaves the link usable until it expires (connected is false and test says which step failed). Connection tests are rate limited (429).',
      request: { params, body: jsonBody(CredentialsSchema.extend({ token }).strict()) },
      responses: {
        200: jsonAnswer(
          z.object({
            connected: z.boolean(),
            state: z.string(),
            test: TestResultSchema.nullable(),
          }),
          'the result',
        ),
        429: { description: 'rate_limited: too many connection tests' },
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      return c.json(await useCredentialsLink(ctx, c.req.valid('param').migrationId, b), 200);
    },
  );
}
