import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { customFieldsOf } from '../custom-fields/store.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, freeJsonObject, idParam, jsonAnswer, jsonBody, textUpTo } from '../http/openapi.js';
import { listQuery, pageSchema } from '../http/pagination.js';
import { ContactSchema, formatContact } from './format.js';
import { listContacts } from './list.js';
import { deleteContact, deleteContactByExternalId, mergeContact } from './removal.js';
import { createContact, getContactFor, MAX_ATTRIBUTES_BYTES, MAX_EMAILS, MAX_EXTERNAL_IDS, updateContact } from './service.js';
import type { ContactView } from './store.js';

const ExternalIdSchema = z.object({ inbox_id: z.string().max(100), external_id: z.string().min(1).max(255) }).strict();
const contactParams = z.object({ contactId: idParam('contactId', 'ct_01hxyz') });

export function registerContactRoutes(app: ApiApp, ctx: Ctx) {
  /** A contact as the API shows it to this caller, with its custom field values. */
  const shownTo = (access: { workspaceId: string; inboxIds: readonly string[] | null }) => async (view: ContactView) => {
    const values = await customFieldsOf(ctx.db, access.workspaceId, 'contact', [view.contact.id]);
    return { ...formatContact(view, { inboxIds: access.inboxIds }), custom_fields: values.get(view.contact.id)! };
  };
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/contacts',
      tags: ['contacts'],
      summary: 'Contacts, newest first (merged records are left out)',
      security: bearer,
      request: {
        query: listQuery.extend({
          email: z.string().max(254).optional(),
          inbox_id: z.string().max(100).optional().openapi({ description: 'contacts with an external id or a conversation in this inbox' }),
          external_id: z.string().max(255).optional().openapi({ description: 'with inbox_id: the contact the backend knows by this id' }),
          q: z.string().max(200).optional().openapi({ description: 'part of the name, an address, an external id or an attribute' }),
          has_open: z.enum(['true', 'false']).optional().openapi({ description: 'true: contacts with a conversation that is not closed; false: without one' }),
          created_after: z.string().max(40).optional().openapi({ description: 'created at or after this time (ISO 8601)' }),
          created_before: z.string().max(40).optional().openapi({ description: 'created before this time (ISO 8601)' }),
        }),
      },
      responses: { 200: jsonAnswer(pageSchema(ContactSchema), 'a page of contacts') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:read');
      const q = c.req.valid('query');
      const filter = {
        email: q.email,
        inboxId: q.inbox_id,
        externalId: q.external_id,
        query: q.q,
        hasOpen: q.has_open === undefined ? undefined : q.has_open === 'true',
        createdAfter: q.created_after,
        createdBefore: q.created_before,
      };
      return c.json(await listContacts(ctx, access, filter, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/contacts',
      tags: ['contacts'],
      summary: 'Create a contact',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              name: textUpTo(200).nullable().optional(),
              emails: z.array(z.string().max(254)).max(MAX_EMAILS).optional(),
              external_ids: z.array(ExternalIdSchema).max(MAX_EXTERNAL_IDS).optional(),
              attributes: freeJsonObject(MAX_ATTRIBUTES_BYTES, 'free attributes').optional(),
              custom_fields: z
                .record(z.string().max(100), z.unknown())
                .optional()
                .openapi({ description: 'values of contact custom fields by key (GET /v1/custom-fields), checked by type; null clears one' }),
            })
            .strict(),
        ),
      },
      responses: { 201: jsonAnswer(ContactSchema, 'the new contact') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:write');
      const b = c.req.valid('json');
      const view = await createContact(ctx, access, {
        name: b.name,
        emails: b.emails,
        externalIds: b.external_ids,
        attributes: b.attributes,
        customFields: b.custom_fields,
      });
      return c.json(await shownTo(access)(view), 201);
    },
  );

  // Declared before /v1/contacts/{contactId} so that "by-external-id" is not taken for an id.
  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/contacts/by-external-id',
      tags: ['contacts'],
      summary: 'Delete the contact your backend knows by an external id: ?inbox_id=…&external_id=… (as DELETE /v1/contacts/{contactId})',
      security: bearer,
      request: { query: z.object({ inbox_id: z.string().min(1).max(100), external_id: z.string().min(1).max(255) }) },
      responses: { 200: jsonAnswer(z.object({ id: z.string(), deleted: z.literal(true), conversations_deleted: z.number().int() }), 'what was deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:write');
      const q = c.req.valid('query');
      const removed = await deleteContactByExternalId(ctx, access, q.inbox_id, q.external_id);
      return c.json({ id: removed.id, deleted: true as const, conversations_deleted: removed.conversations }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/contacts/{contactId}',
      tags: ['contacts'],
      summary: 'One contact (a merged one shows merged_into_id)',
      security: bearer,
      request: { params: contactParams },
      responses: { 200: jsonAnswer(ContactSchema, 'the contact') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:read');
      return c.json(await shownTo(access)(await getContactFor(ctx, access, c.req.valid('param').contactId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/contacts/{contactId}',
      tags: ['contacts'],
      summary: 'Change a contact: name, emails and external_ids replace the lists; attributes and custom_fields merge (null removes a key)',
      security: bearer,
      request: {
        params: contactParams,
        body: jsonBody(
          z
            .object({
              name: textUpTo(200).nullable().optional(),
              emails: z.array(z.string().max(254)).max(MAX_EMAILS).optional(),
              external_ids: z.array(ExternalIdSchema).max(MAX_EXTERNAL_IDS).optional(),
              attributes: freeJsonObject(MAX_ATTRIBUTES_BYTES, 'attributes to merge; null removes a key').optional(),
              custom_fields: z
                .record(z.string().max(100), z.unknown())
                .optional()
                .openapi({ description: 'values of contact custom fields by key (GET /v1/custom-fields), checked by type; null clears one' }),
            })
            .strict(),
        ),
      },
      responses: { 200: jsonAnswer(ContactSchema, 'the contact as it is now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:write');
      const b = c.req.valid('json');
      const view = await updateContact(ctx, access, c.req.valid('param').contactId, {
        name: b.name,
        emails: b.emails,
        externalIds: b.external_ids,
        attributes: b.attributes,
        customFields: b.custom_fields,
      });
      return c.json(await shownTo(access)(view), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/contacts/{contactId}/merge',
      tags: ['contacts'],
      summary: 'Merge this contact into another: the target gets its addresses, external ids and conversations',
      security: bearer,
      request: { params: contactParams, body: jsonBody(z.object({ into_contact_id: z.string().min(1).max(100) }).strict()) },
      responses: { 200: jsonAnswer(ContactSchema, 'the merge target as it is now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:write');
      const view = await mergeContact(ctx, access, c.req.valid('param').contactId, c.req.valid('json').into_contact_id);
      return c.json(await shownTo(access)(view), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/contacts/{contactId}',
      tags: ['contacts'],
      summary: 'Delete a contact with its conversations, messages, attachments and original e-mails',
      security: bearer,
      request: { params: contactParams },
      responses: { 200: jsonAnswer(z.object({ id: z.string(), deleted: z.literal(true), conversations_deleted: z.number().int() }), 'what was deleted') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      requireScope(access, 'contacts:write');
      const id = c.req.valid('param').contactId;
      const removed = await deleteContact(ctx, access, id);
      return c.json({ id, deleted: true as const, conversations_deleted: removed.conversations }, 200);
    },
  );
}
