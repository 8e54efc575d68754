import { createRoute, z } from '@hono/zod-openapi';
import { requireManager } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody, noContent } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { PLACEHOLDER_KEYS } from './placeholders.js';
import { renderForConversation } from './render.js';
import {
  createSavedReply,
  deleteSavedReply,
  formatSavedReply,
  getSavedReply,
  listSavedReplies,
  MAX_BODY_CHARS,
  MAX_HTML_CHARS,
  MAX_NAME_CHARS,
  MAX_PERSONAL_REPLIES,
  MAX_QUERY_CHARS,
  MAX_WORKSPACE_REPLIES,
  requireReplyReader,
  requireReplyWriter,
  updateSavedReply,
} from './service.js';
import { getInboxSignature, getMemberSignature, MAX_SIGNATURE_CHARS, memberOf, setInboxSignature, setMemberSignature } from './signatures.js';

const PLACEHOLDER_HELP = `Placeholders: ${PLACEHOLDER_KEYS.map((k) => `{{${k}}}`).join(', ')}; a fallback after a bar, {{contact.first_name|friend}}, replaces a missing value (without one, a missing contact name or first name renders as "there", anything else as nothing). Unknown placeholders are refused with 400.`;

export const SavedReplySchema = z
  .object({
    id: z.string(),
    scope: z
      .enum(['workspace', 'personal'])
      .openapi({ description: 'workspace: every member uses it, owners and admins edit it; personal: only its owner sees it' }),
    name: z.string().openapi({ description: 'the shortcut typed after # in the composer' }),
    body: z.string().openapi({ description: 'text with placeholders, as saved (made from html when the reply is formatted)' }),
    html: z.string().nullable().openapi({ description: 'sanitized HTML of a formatted reply; null when it is plain text' }),
    owner_id: z.string().nullable().openapi({ description: 'the member a personal reply belongs to' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('SavedReply');

const SignatureSchema = z
  .object({
    body: z.string().openapi({ description: 'plain text, empty when there is none (made from html when the signature is formatted)' }),
    html: z.string().nullable().openapi({ description: 'sanitized HTML of a formatted signature; null when it is plain text' }),
    updated_at: z.string().nullable(),
  })
  .openapi('Signature');
const InboxSignatureSchema = SignatureSchema.extend({ inbox_id: z.string() }).openapi('InboxSignature');
const signatureBody = z
  .object({
    body: z
      .string()
      .max(MAX_SIGNATURE_CHARS * 2 + 100)
      .optional()
      .openapi({ description: `at most ${MAX_SIGNATURE_CHARS} characters; empty removes it. ${PLACEHOLDER_HELP}` }),
    html: z
      .string()
      .max(MAX_SIGNATURE_CHARS * 10)
      .optional()
      .openapi({ description: 'a formatted signature (sanitized; its plain text is made from it, at most as long as body); wins over body' }),
  })
  .strict()
  .refine((b) => b.body !== undefined || b.html !== undefined, { message: 'give body or html', path: ['body'] });

const replyParams = z.object({ savedReplyId: idParam('savedReplyId', 'sr_01hxyz') });
const nameField = z
  .string()
  .max(MAX_NAME_CHARS * 4)
  .openapi({ description: `1 to ${MAX_NAME_CHARS} characters, one line; unique (ignoring case) among the workspace’s replies, or among the member’s own` });
const bodyField = z
  .string()
  .max(MAX_BODY_CHARS * 2)
  .openapi({ description: `at most ${MAX_BODY_CHARS} characters. ${PLACEHOLDER_HELP}` });
const htmlField = z.string().max(MAX_HTML_CHARS).openapi({
  description: `a formatted reply, as the composer's editor makes it: sanitized as replies are, and the plain body made from it (html alone is enough; it wins over body)`,
});

export function registerSavedReplyRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/saved-replies',
      tags: ['saved-replies'],
      summary: 'Saved replies the caller may use: the workspace’s and their own (by name)',
      description:
        'Members see workspace replies and their own personal ones; API keys (conversations:write) see workspace replies. `q` keeps replies whose name or body contains every word, ignoring case.',
      security: bearer,
      request: {
        query: listQuery.extend({
          q: z.string().max(MAX_QUERY_CHARS).optional().openapi({ description: 'words the name or body contains' }),
          scope: z.enum(['workspace', 'personal']).optional(),
        }),
      },
      responses: { 200: jsonAnswer(pageSchema(SavedReplySchema), 'a page of saved replies, by name') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(await listSavedReplies(ctx, access, c.req.valid('query')), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/saved-replies',
      tags: ['saved-replies'],
      summary: 'Save a reply (workspace replies: owners and admins, or keys with workspace:manage; personal: members)',
      description: `At most ${MAX_WORKSPACE_REPLIES} workspace replies and ${MAX_PERSONAL_REPLIES} personal ones per member (409 saved_reply_limit).`,
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              name: nameField,
              body: bodyField.optional(),
              html: htmlField.optional(),
              scope: z.enum(['workspace', 'personal']).optional().openapi({ description: 'default personal for members, workspace for API keys' }),
            })
            .strict()
            .refine((b) => b.body !== undefined || b.html !== undefined, { message: 'give body or html', path: ['body'] }),
        ),
      },
      responses: { 201: jsonAnswer(SavedReplySchema, 'the saved reply') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireReplyWriter(access);
      const b = c.req.valid('json');
      const scope = b.scope ?? (access.actor.kind === 'member' ? 'personal' : 'workspace');
      return c.json(formatSavedReply(await createSavedReply(ctx, access, { name: b.name, body: b.body, html: b.html, scope })), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/saved-replies/{savedReplyId}',
      tags: ['saved-replies'],
      summary: 'One saved reply',
      security: bearer,
      request: { params: replyParams },
      responses: { 200: jsonAnswer(SavedReplySchema, 'the saved reply') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      return c.json(formatSavedReply(await getSavedReply(ctx, access, c.req.valid('param').savedReplyId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/saved-replies/{savedReplyId}',
      tags: ['saved-replies'],
      summary: 'Change a saved reply’s name or body (its scope stays)',
      security: bearer,
      request: {
        params: replyParams,
        body: jsonBody(z.object({ name: nameField.optional(), body: bodyField.optional(), html: htmlField.optional() }).strict()),
      },
      responses: { 200: jsonAnswer(SavedReplySchema, 'the saved reply') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireReplyWriter(access);
      return c.json(formatSavedReply(await updateSavedReply(ctx, access, c.req.valid('param').savedReplyId, c.req.valid('json'))), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/saved-replies/{savedReplyId}',
      tags: ['saved-replies'],
      summary: 'Delete a saved reply',
      security: bearer,
      request: { params: replyParams },
      responses: { 204: noContent('deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      await deleteSavedReply(ctx, access, c.req.valid('param').savedReplyId);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/conversations/{conversationId}/render-reply',
      tags: ['saved-replies'],
      summary: 'Fill in a saved reply’s (or any text’s) placeholders for a conversation',
      description: `Renders as written by the calling member (API keys: by member_id, else with no member). Nothing is stored or sent. ${PLACEHOLDER_HELP}`,
      security: bearer,
      request: {
        params: z.object({ conversationId: idParam('conversationId', 'cv_01hxyz') }),
        body: jsonBody(
          z
            .object({
              saved_reply_id: z.string().max(100).optional(),
              body: bodyField.optional(),
              member_id: z.string().max(100).optional().openapi({ description: 'API keys: render as this member' }),
            })
            .strict()
            .openapi({ description: 'exactly one of saved_reply_id and body' }),
        ),
      },
      responses: {
        200: jsonAnswer(
          z.object({
            body: z.string(),
            html: z.string().nullable().openapi({ description: 'the rendered HTML of a formatted saved reply (values escaped); null for plain text' }),
          }),
          'the rendered text',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireReplyReader(access);
      const b = c.req.valid('json');
      return c.json(
        await renderForConversation(ctx, access, c.req.valid('param').conversationId, { savedReplyId: b.saved_reply_id, body: b.body, memberId: b.member_id }),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/me/signature',
      tags: ['saved-replies'],
      summary: 'The signed-in member’s signature in this workspace',
      security: bearer,
      responses: { 200: jsonAnswer(SignatureSchema, 'the signature') },
    }),
    async (c) => c.json(await getMemberSignature(ctx, await requireAccess(c, ctx)), 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/me/signature',
      tags: ['saved-replies'],
      summary: 'Set the signed-in member’s signature in this workspace (added to their e-mail replies)',
      security: bearer,
      request: { body: jsonBody(signatureBody) },
      responses: { 200: jsonAnswer(SignatureSchema, 'the signature') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      memberOf(access);
      return c.json(await setMemberSignature(ctx, access, c.req.valid('json')), 200);
    },
  );

  const inboxParams = z.object({ inboxId: idParam('inboxId', 'inb_01hxyz') });
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/inboxes/{inboxId}/signature',
      tags: ['saved-replies'],
      summary: 'An inbox’s signature (added to e-mail replies after the member’s)',
      security: bearer,
      request: { params: inboxParams },
      responses: { 200: jsonAnswer(InboxSignatureSchema, 'the signature') },
    }),
    async (c) => c.json(await getInboxSignature(ctx, await requireAccess(c, ctx), c.req.valid('param').inboxId), 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/inboxes/{inboxId}/signature',
      tags: ['saved-replies'],
      summary: 'Set an inbox’s signature (owners and admins, or keys with workspace:manage)',
      security: bearer,
      request: { params: inboxParams, body: jsonBody(signatureBody) },
      responses: { 200: jsonAnswer(InboxSignatureSchema, 'the signature') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireManager(access, 'workspace:manage');
      return c.json(await setInboxSignature(ctx, access, c.req.valid('param').inboxId, c.req.valid('json')), 200);
    },
  );
}
