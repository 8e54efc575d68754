// Setting custom field values of a conversation or a contact (the `custom_fields` object of their
// PATCH), inside the caller's transaction: every value is checked against its field's type first
// (a 400 names each bad field, nothing is written), then the owner's rows of the changed fields are
// replaced. null (or an empty multi-select) clears a field.
import type { CustomFieldObject, Db } from '../db/schema.js';
import { invalid } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import { type FieldDefinition, type FieldValue, fieldsOfObject, isCalendarDate, valueFromRows } from './store.js';

export const MAX_TEXT_CHARS = 2000;
export const MAX_LINK_CHARS = 2000;
/** Numbers beyond this lose whole-number precision in a double. */
export const MAX_NUMBER = 1e15;

type Issue = { path: string; message: string };
type Row = { item: number; value_text: string | null; value_number: number | null };

/** The rows a value is stored as, or a message that says what the field takes. */
export function checkValue(field: FieldDefinition, value: unknown): Row[] | string {
  switch (field.type) {
    case 'text':
      if (typeof value !== 'string') return 'a text';
      if (charCount(value) > MAX_TEXT_CHARS) return `at most ${MAX_TEXT_CHARS} characters`;
      if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) return 'a text without control characters';
      return value.trim() === '' ? [] : [{ item: 0, value_text: value, value_number: null }];
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'a number';
      if (Math.abs(value) > MAX_NUMBER) return `a number from -${MAX_NUMBER} to ${MAX_NUMBER}`;
      return [{ item: 0, value_text: null, value_number: value }];
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value)) return 'a date as YYYY-MM-DD';
      return [{ item: 0, value_text: value, value_number: null }];
    case 'checkbox':
      if (typeof value !== 'boolean') return 'true or false';
      return [{ item: 0, value_text: null, value_number: value ? 1 : 0 }];
    case 'link': {
      if (typeof value !== 'string') return 'a link (http or https URL)';
      if (value.length > MAX_LINK_CHARS) return `a link of at most ${MAX_LINK_CHARS} characters`;
      if (!isWebLink(value)) return 'a link (http or https URL)';
      return [{ item: 0, value_text: value, value_number: null }];
    }
    case 'single_select':
      if (typeof value !== 'string' || !field.options?.includes(value)) return `one of: ${(field.options ?? []).join(', ')}`;
      return [{ item: 0, value_text: value, value_number: null }];
    case 'multi_select': {
      const options = field.options ?? [];
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return `a list of: ${options.join(', ')}`;
      const bad = (value as string[]).find((v) => !options.includes(v));
      if (bad !== undefined) return `“${bad}” is not an option (${options.join(', ')})`;
      if (new Set(value).size !== value.length) return 'each option at most once';
      return (value as string[]).map((v, item) => ({ item, value_text: v, value_number: null }));
    }
  }
}

/** An absolute http(s) URL with a host, nothing else (no javascript:, data:, mailto:). */
export function isWebLink(text: string): boolean {
  if (/\s/.test(text)) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
}

/**
 * Writes the given values of one owner (keys not given stay as they are); returns what changed by
 * key, for the owner's timeline and event. Throws 400 (each bad key in `issues` as
 * `custom_fields.<key>`) before writing anything.
 */
export async function setCustomFieldValues(
  db: Db,
  input: { workspaceId: string; object: CustomFieldObject; ownerId: string; values: Record<string, unknown> },
): Promise<Record<string, { from: FieldValue | null; to: FieldValue | null }>> {
  const fields = new Map((await fieldsOfObject(db, input.workspaceId, input.object)).map((f) => [f.key, f]));
  const issues: Issue[] = [];
  const next = new Map<FieldDefinition, Row[]>();
  for (const [key, value] of Object.entries(input.values)) {
    const field = fields.get(key);
    if (!field) {
      issues.push({ path: `custom_fields.${key}`, message: `no ${input.object} field has this key` });
      continue;
    }
    if (value === null) {
      next.set(field, []);
      continue;
    }
    const rows = checkValue(field, value);
    if (typeof rows === 'string') issues.push({ path: `custom_fields.${key}`, message: rows });
    else next.set(field, rows);
  }
  if (issues.length) throw invalid(issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
  if (next.size === 0) return {};
  const ids = [...next.keys()].map((f) => f.id);
  const current = await db
    .selectFrom('custom_field_values')
    .select(['field_id', 'owner_id', 'item', 'value_text', 'value_number'])
    .where('owner_id', '=', input.ownerId)
    .where('field_id', 'in', ids)
    .execute();
  const changes: Record<string, { from: FieldValue | null; to: FieldValue | null }> = {};
  for (const [field, rows] of next) {
    const before = valueFromRows(
      field,
      current.filter((r) => r.field_id === field.id),
    );
    const after = valueFromRows(
      field,
      rows.map((r) => ({ ...r, field_id: field.id, owner_id: input.ownerId })),
    );
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    await db.deleteFrom('custom_field_values').where('field_id', '=', field.id).where('owner_id', '=', input.ownerId).execute();
    if (rows.length)
      await db
        .insertInto('custom_field_values')
        .values(rows.map((r) => ({ ...r, field_id: field.id, owner_id: input.ownerId, workspace_id: input.workspaceId })))
        .execute();
    changes[field.key] = { from: before, to: after };
  }
  return changes;
}

/**
 * A contact merged into another: the target gets the source's values of the fields it has no value
 * for (as it gets name and attributes only where it has none); the source's other values go.
 */
export async function mergeCustomFieldValues(db: Db, sourceId: string, targetId: string): Promise<void> {
  const held = await db.selectFrom('custom_field_values').select('field_id').distinct().where('owner_id', '=', targetId).execute();
  let moving = db.updateTable('custom_field_values').set({ owner_id: targetId }).where('owner_id', '=', sourceId);
  if (held.length)
    moving = moving.where(
      'field_id',
      'not in',
      held.map((r) => r.field_id),
    );
  await moving.execute();
  await db.deleteFrom('custom_field_values').where('owner_id', '=', sourceId).execute();
}
