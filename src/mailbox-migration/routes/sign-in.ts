// The sign-in providers' redirect back (Google, Microsoft): public, outside /v1/migrations (which is
// for managers only); the single-use state is the authority, and a sign-in a member started must
// come back in that member's signed-in browser.
import { createRoute, z } from '@hono/zod-openapi';
import type { Ctx } from '../../context.js';
import type { ApiApp } from '../../http/app.js';
import { optionalPerson } from '../../http/auth.js';
import { finishChannelSignIn } from '../../mail-accounts/sign-in.js';
import { finishSignIn } from '../sign-ins.js';
import { SIGN_IN_CALLBACK_PATH } from '../sources/sign-in.js';
import { tags } from './common.js';

const text = (description: string) => z.string().max(4000).optional().openapi({ description });

export function registerSignInRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: SIGN_IN_CALLBACK_PATH,
      tags,
      summary:
        'Where Google or Microsoft send the browser after a migration’s or an e-mail channel’s sign-in; stores the grant sealed and returns to the wizard or the channel',
      description:
        'Register `<public URL>/v1/migration-sign-in/callback` as the redirect URI of the OAuth client. Answers 303 to `/settings/migrations/{id}?signed_in=<provider>` (or `?sign_in_error=<code>`); a channel’s sign-in returns to `/settings/inboxes/{inbox_id}?channel={id}&signed_in=<provider>`; an unknown, used or expired state answers 400 `sign_in_expired`.',
      request: {
        query: z.object({
          state: text('the state the sign-in was started with'),
          code: text('the authorization code'),
          error: text('the provider’s error (access_denied when the person declined)'),
          error_description: text('the provider’s explanation (not stored)'),
        }),
      },
      responses: { 303: { description: 'back to the migration wizard' } },
    }),
    async (c) => {
      const person = await optionalPerson(c, ctx);
      const { state, code, error } = c.req.valid('query');
      // One redirect URI for both: an e-mail channel's sign-in (src/mail-accounts) or a migration's.
      const { redirect } =
        (await finishChannelSignIn(ctx, { state, code, error }, person?.personId)) ?? (await finishSignIn(ctx, { state, code, error }, person?.personId));
      c.header('cache-control', 'no-store');
      c.header('referrer-policy', 'no-referrer');
      return c.redirect(redirect, 303);
    },
  );
}
