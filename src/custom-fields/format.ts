// What the API shows of custom field definitions, and the schema of `custom_fields` objects on
// conversations and contacts (their format.ts files use it).
import { z } from '@hono/zod-openapi';
import type { FieldDefinition } from './store.js';

export function formatField(f: FieldDefinition) {
  return {
    id: f.id,
    object: f.object,
    key: f.key,
    label: f.label,
    type: f.type,
    options: f.options,
    required_before_closing: f.requiredBeforeClosing,
    position: f.position,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
  };
}

export const FieldTypeSchema = z.enum(['text', 'number', 'date', 'single_select', 'multi_select', 'checkbox', 'link']).openapi({
  description:
    'text; number; date (YYYY-MM-DD); single_select (one of options); multi_select (a list of options); checkbox (true/false); link (an http or https URL)',
});

export const CustomFieldSchema = z
  .object({
    id: z.string(),
    object: z.enum(['conversation', 'contact']),
    key: z.string().openapi({ description: 'the stable slug that names the field’s value in `custom_fields` objects' }),
    label: z.string(),
    type: FieldTypeSchema,
    options: z.array(z.string()).nullable().openapi({ description: 'the choices of a select; null for other types' }),
    required_before_closing: z.boolean().openapi({ description: 'a conversation may not be closed while this field is empty' }),
    position: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('CustomField');

export const CustomFieldValuesSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]).nullable())
  .openapi('CustomFieldValues', {
    description:
      'the values of the workspace’s custom fields by key (GET /v1/custom-fields), every field present, null when empty: text, date (YYYY-MM-DD), single_select and link as strings, number, checkbox as a boolean, multi_select as a list',
  });
