// /v1/custom-fields (issue 37): every member reads the definitions; owners and admins (keys with
// workspace:manage) make, change and delete them. Values are set through the `custom_fields`
// object of conversations and contacts.
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { CustomFieldObject, CustomFieldType } from '../db/schema.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, idParam, jsonAnswer, jsonBody } from '../http/openapi.js';
import { CustomFieldSchema, FieldTypeSchema, formatField } from './format.js';
import { createField, deleteField, getField, listFields, MAX_LABEL_CHARS, MAX_OPTION_CHARS, MAX_OPTIONS, MAX_POSITION, updateField } from './service.js';

const ObjectSchema = z.enum(['conversation', 'contact']);
const Options = z
  .array(z.string().max(MAX_OPTION_CHARS * 4))
  .max(MAX_OPTIONS)
  .nullable()
  .openapi({ description: `the choices of a select (1 to ${MAX_OPTIONS}, each unique); taking one away removes the values that chose it` });
const Position = z.number().int().min(0).max(MAX_POSITION).openapi({ description: 'order in the panel (ascending); new fields go last' });

const CreateBody = z
  .object({
    object: ObjectSchema,
    key: z.string().max(100).openapi({ example: 'order_number', description: 'a slug (a-z, 0-9, _; a letter first; at most 48); never changes' }),
    label: z
      .string()
      .max(MAX_LABEL_CHARS * 4)
      .openapi({ example: 'Order number' }),
    type: FieldTypeSchema,
    options: Options.optional(),
    required_before_closing: z
      .boolean()
      .optional()
      .openapi({ description: 'conversation fields: closing is refused (409 custom_fields_required) while it is empty' }),
    position: Position.optional(),
  })
  .strict();

const PatchBody = z
  .object({
    label: z
      .string()
      .max(MAX_LABEL_CHARS * 4)
      .optional(),
    options: Options.optional(),
    required_before_closing: z.boolean().optional(),
    position: Position.optional(),
  })
  .strict();

const params = z.object({ fieldId: idParam('fieldId', 'cf_01hxyz') });

export function registerCustomFieldRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/custom-fields',
      tags: ['custom-fields'],
      summary: 'The workspace’s custom fields, conversation fields first, each in its order (every member reads them)',
      security: bearer,
      request: { query: z.object({ object: ObjectSchema.optional() }) },
      responses: { 200: jsonAnswer(z.object({ data: z.array(CustomFieldSchema), next_cursor: z.null() }), 'every field (at most 100 per object)') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'custom_fields:read');
      const fields = await listFields(ctx, access, c.req.valid('query').object as CustomFieldObject | undefined);
      return c.json({ data: fields.map(formatField), next_cursor: null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/custom-fields',
      tags: ['custom-fields'],
      summary: 'Define a custom field (owners and admins)',
      description: 'Keys are unique per workspace and object (409 custom_field_key_taken); every other problem is named in `issues`.',
      security: bearer,
      request: { body: jsonBody(CreateBody) },
      responses: { 201: jsonAnswer(CustomFieldSchema, 'the field'), 409: { description: 'custom_field_key_taken or too_many_custom_fields' } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'custom_fields:manage');
      const b = c.req.valid('json');
      const field = await createField(ctx, access, {
        object: b.object as CustomFieldObject,
        key: b.key,
        label: b.label,
        type: b.type as CustomFieldType,
        options: b.options,
        requiredBeforeClosing: b.required_before_closing,
        position: b.position,
      });
      return c.json(formatField(field), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/custom-fields/{fieldId}',
      tags: ['custom-fields'],
      summary: 'One custom field',
      security: bearer,
      request: { params },
      responses: { 200: jsonAnswer(CustomFieldSchema, 'the field') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'custom_fields:read');
      return c.json(formatField(await getField(ctx, access, c.req.valid('param').fieldId)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v1/custom-fields/{fieldId}',
      tags: ['custom-fields'],
      summary: 'Change a custom field’s label, options, required_before_closing or position (owners and admins)',
      description: 'object, key and type never change. An option taken out of a select removes the values that chose it.',
      security: bearer,
      request: { params, body: jsonBody(PatchBody) },
      responses: { 200: jsonAnswer(CustomFieldSchema, 'the field as it is now') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'custom_fields:manage');
      const b = c.req.valid('json');
      const field = await updateField(ctx, access, c.req.valid('param').fieldId, {
        label: b.label,
        options: b.options,
        requiredBeforeClosing: b.required_before_closing,
        position: b.position,
      });
      return c.json(formatField(field), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/custom-fields/{fieldId}',
      tags: ['custom-fields'],
      summary: 'Delete a custom field and every value of it (owners and admins)',
      security: bearer,
      request: { params },
      responses: {
        200: jsonAnswer(
          z.object({
            id: z.string(),
            deleted: z.literal(true),
            values_deleted: z.number().int().openapi({ description: 'conversations or contacts that had a value of it' }),
          }),
          'what was deleted',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'custom_fields:manage');
      const id = c.req.valid('param').fieldId;
      const removed = await deleteField(ctx, access, id);
      return c.json({ id, deleted: true as const, values_deleted: removed.values }, 200);
    },
  );
}
