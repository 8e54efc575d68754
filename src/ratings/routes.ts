import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { authorize, requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp, AppEnv } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { resolveInbox } from '../inboxes/service.js';
import { AppError } from '../platform/errors.js';
import { RatingSettingsSchema } from './format.js';
import {
  answerRatingLink,
  getRatingSettings,
  RATING_COMMENT_MAX_CHARS,
  RATING_PAGE_STYLE_HASH,
  ratingPage,
  renderRatingPage,
  setRatingSettings,
} from './service.js';

const inboxParams = z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') });
const tokenParams = z.object({
  token: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'token', in: 'path' } }),
});
const htmlAnswer = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

const PAGE_HEADERS = {
  'content-security-policy': `default-src 'none'; style-src ${RATING_PAGE_STYLE_HASH}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

const wantsPage = (c: Context<AppEnv>) => (c.req.header('accept') ?? '').includes('text/html');

function page(c: Context<AppEnv>, html: string, status: 200 | 400 | 404 | 409 | 410) {
  return c.body(html, status, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' });
}

export function registerRatingRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/ratings',
      tags: ['inboxes'],
      summary: 'Whether the inbox asks customers for a satisfaction rating when a conversation is closed',
      security: bearer,
      request: { params: inboxParams },
      responses: { 200: jsonAnswer(RatingSettingsSchema, 'the rating settings') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json((await getRatingSettings(ctx, access, inbox.id)).settings, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/inboxes/{inboxId}/ratings',
      tags: ['inboxes'],
      summary: 'Switch satisfaction ratings on or off for the inbox',
      description:
        'When a member or API key closes a conversation, its customer is asked once: by mail with signed one-click links (e-mail conversations) or in the widget (chat). Never for imported conversations, spam, or closes by retention or a migration.',
      security: bearer,
      request: { params: inboxParams, body: jsonBody(z.object({ enabled: z.boolean() }).strict().openapi('InboxRatingSettingsPatch')) },
      responses: { 200: jsonAnswer(RatingSettingsSchema, 'the settings as saved') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'inboxes:manage');
      const inbox = await resolveInbox(ctx, access.workspaceId, c.req.valid('param').inboxId);
      requireInbox(access, inbox.id);
      return c.json(await setRatingSettings(ctx, access, inbox.id, c.req.valid('json')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/ratings/{token}',
      tags: ['ratings'],
      summary: 'The rating page of a mailed rating link; needs no sign-in and records nothing (link scanners follow links)',
      request: { params: tokenParams, query: z.object({ score: z.string().max(10).optional().openapi({ description: '1 to 5: preselected on the page' }) }) },
      responses: {
        200: htmlAnswer('the page with the score preselected and a comment field'),
        404: { description: 'unknown or forged link (a page for browsers)' },
      },
    }),
    async (c) => {
      const token = c.req.valid('param').token;
      let view: Awaited<ReturnType<typeof ratingPage>>;
      try {
        view = await ratingPage(ctx, token);
      } catch (error) {
        if (error instanceof AppError && error.status === 404 && wantsPage(c))
          return page(c, renderRatingPage({ state: 'expired', locale: 'en', action: '' }), 404);
        throw error;
      }
      const raw = Number(c.req.valid('query').score);
      const score = Number.isInteger(raw) && raw >= 1 && raw <= 5 ? raw : undefined;
      return page(c, renderRatingPage({ state: view.state, locale: view.locale, score, action: `/v1/ratings/${token}` }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/ratings/{token}',
      tags: ['ratings'],
      summary: 'Record the rating of a mailed rating link (once); needs no sign-in',
      request: {
        params: tokenParams,
        body: {
          content: {
            'application/x-www-form-urlencoded': {
              schema: z.object({
                score: z.string().max(10).optional().openapi({ description: '1 to 5' }),
                comment: z
                  .string()
                  .max(RATING_COMMENT_MAX_CHARS * 4)
                  .optional(),
              }),
            },
          },
          required: true,
        },
      },
      responses: {
        200: htmlAnswer('recorded: a thank-you page'),
        400: { description: 'no valid score (browsers get the page again)' },
        404: { description: 'unknown or forged link' },
        409: { description: 'rating_already_recorded' },
        410: { description: 'rating_expired: the link is older than 30 days' },
      },
    }),
    async (c) => {
      const token = c.req.valid('param').token;
      const form = c.req.valid('form');
      try {
        await answerRatingLink(ctx, token, { score: form.score, comment: form.comment });
        const view = await ratingPage(ctx, token);
        return page(c, renderRatingPage({ state: 'thanks', locale: view.locale, action: '' }), 200);
      } catch (error) {
        // Browsers (the form) get a page; other clients the usual JSON error.
        if (!(error instanceof AppError) || !wantsPage(c)) throw error;
        if (error.status === 404) return page(c, renderRatingPage({ state: 'expired', locale: 'en', action: '' }), 404);
        const view = await ratingPage(ctx, token);
        if (error.status === 409) return page(c, renderRatingPage({ state: 'answered', locale: view.locale, action: '' }), 409);
        if (error.status === 410) return page(c, renderRatingPage({ state: 'expired', locale: view.locale, action: '' }), 410);
        return page(c, renderRatingPage({ state: 'open', locale: view.locale, error: error.message, action: `/v1/ratings/${token}` }), 400);
      }
    },
  );
}
