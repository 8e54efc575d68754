// Custom fields for other features: the definitions of a workspace (cached while the reaction
// settings epoch holds: migration 0055's triggers move it), the values of conversations and
// contacts as the API shows them, the list filter, and the removal of an owner's values. The only
// reads of the custom field tables outside this folder go through here.
import { type Expression, type SqlBool, sql } from 'kysely';
import type { CustomFieldObject, CustomFieldsTable, CustomFieldType, Db } from '../db/schema.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import { invalid } from '../platform/errors.js';

export interface FieldDefinition {
  id: string;
  object: CustomFieldObject;
  key: string;
  label: string;
  type: CustomFieldType;
  options: string[] | null;
  requiredBeforeClosing: boolean;
  position: number;
  createdAt: string;
  updatedAt: string;
}

/** A value as the API shows it: text, date (YYYY-MM-DD), select and link are strings, a multi-select a list. */
export type FieldValue = string | number | boolean | string[];

export function definitionOf(row: CustomFieldsTable): FieldDefinition {
  return {
    id: row.id,
    object: row.object,
    key: row.key,
    label: row.label,
    type: row.type,
    options: row.options ? (JSON.parse(row.options) as string[]) : null,
    requiredBeforeClosing: row.required_before_closing === 1,
    position: row.position,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Every field of the workspace, in the order people arranged them (conversation fields, then contact fields). */
export async function fieldsOf(db: Db, workspaceId: string): Promise<FieldDefinition[]> {
  return cachedReactionSetting(db, `custom_fields:${workspaceId}`, async () => {
    const rows = await db
      .selectFrom('custom_fields')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('object', 'desc')
      .orderBy('position')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(definitionOf);
  });
}

export async function fieldsOfObject(db: Db, workspaceId: string, object: CustomFieldObject): Promise<FieldDefinition[]> {
  return (await fieldsOf(db, workspaceId)).filter((f) => f.object === object);
}

type ValueRow = { field_id: string; owner_id: string; item: number; value_text: string | null; value_number: number | null };

/** Folds an owner's rows of one field into the value the API shows. */
export function valueFromRows(field: FieldDefinition, rows: readonly ValueRow[]): FieldValue | null {
  if (rows.length === 0) return null;
  switch (field.type) {
    case 'number':
      return Number(rows[0].value_number);
    case 'checkbox':
      return Number(rows[0].value_number) === 1;
    case 'multi_select':
      return [...rows].sort((a, b) => a.item - b.item).map((r) => r.value_text ?? '');
    default:
      return rows[0].value_text ?? '';
  }
}

/**
 * The `custom_fields` object of each owner: every field of the object by key (in the fields' order),
 * null where it has no value. No statement when the workspace has no such fields.
 */
export async function customFieldsOf(
  db: Db,
  workspaceId: string,
  object: CustomFieldObject,
  ownerIds: readonly string[],
): Promise<Map<string, Record<string, FieldValue | null>>> {
  const fields = await fieldsOfObject(db, workspaceId, object);
  return shownValues(db, fields, ownerIds);
}

async function shownValues(db: Db, fields: readonly FieldDefinition[], ownerIds: readonly string[]) {
  const out = new Map<string, Record<string, FieldValue | null>>();
  const unique = [...new Set(ownerIds)];
  const rows = fields.length && unique.length ? await valueRows(db, fields, unique) : [];
  const byOwnerField = new Map<string, ValueRow[]>();
  for (const r of rows) {
    const k = `${r.owner_id}\n${r.field_id}`;
    const list = byOwnerField.get(k);
    if (list) list.push(r);
    else byOwnerField.set(k, [r]);
  }
  for (const owner of unique) {
    const shown: Record<string, FieldValue | null> = {};
    for (const f of fields) shown[f.key] = valueFromRows(f, byOwnerField.get(`${owner}\n${f.id}`) ?? []);
    out.set(owner, shown);
  }
  return out;
}

async function valueRows(db: Db, fields: readonly FieldDefinition[], ownerIds: readonly string[]): Promise<ValueRow[]> {
  const out: ValueRow[] = [];
  for (let i = 0; i < ownerIds.length; i += 500) {
    out.push(
      ...(await db
        .selectFrom('custom_field_values')
        .select(['field_id', 'owner_id', 'item', 'value_text', 'value_number'])
        .where('owner_id', 'in', ownerIds.slice(i, i + 500))
        .where(
          'field_id',
          'in',
          fields.map((f) => f.id),
        )
        .execute()),
    );
  }
  return out;
}

/**
 * For an event's data: the values of a conversation and of a contact in one statement (either may
 * be absent). Nothing is read when the workspace has no fields of the kinds asked for.
 */
export async function customFieldsForEvent(
  db: Db,
  workspaceId: string,
  owners: { conversationId?: string; contactId?: string },
): Promise<{ conversation?: Record<string, FieldValue | null>; contact?: Record<string, FieldValue | null> }> {
  const all = await fieldsOf(db, workspaceId);
  const conversationFields = owners.conversationId ? all.filter((f) => f.object === 'conversation') : [];
  const contactFields = owners.contactId ? all.filter((f) => f.object === 'contact') : [];
  const ids = [owners.conversationId, owners.contactId].filter((x): x is string => typeof x === 'string');
  const fields = [...conversationFields, ...contactFields];
  const rows = fields.length ? await valueRows(db, fields, ids) : [];
  const fold = (list: FieldDefinition[], owner: string) => {
    const shown: Record<string, FieldValue | null> = {};
    for (const f of list)
      shown[f.key] = valueFromRows(
        f,
        rows.filter((r) => r.owner_id === owner && r.field_id === f.id),
      );
    return shown;
  };
  return {
    conversation: owners.conversationId ? fold(conversationFields, owners.conversationId) : undefined,
    contact: owners.contactId ? fold(contactFields, owners.contactId) : undefined,
  };
}

/** Removes every value of these conversations or contacts (they are being deleted). Call in their transaction. */
export async function deleteCustomFieldValuesOf(db: Db, ownerIds: readonly string[]): Promise<void> {
  for (let i = 0; i < ownerIds.length; i += 500)
    await db
      .deleteFrom('custom_field_values')
      .where('owner_id', 'in', ownerIds.slice(i, i + 500))
      .execute();
}

/** The required-before-closing conversation fields that this conversation leaves empty. */
export async function missingRequiredFields(db: Db, workspaceId: string, conversationId: string): Promise<FieldDefinition[]> {
  const required = (await fieldsOfObject(db, workspaceId, 'conversation')).filter((f) => f.requiredBeforeClosing);
  if (required.length === 0) return [];
  const filled = await db
    .selectFrom('custom_field_values')
    .select('field_id')
    .distinct()
    .where('owner_id', '=', conversationId)
    .where(
      'field_id',
      'in',
      required.map((f) => f.id),
    )
    .execute();
  const has = new Set(filled.map((r) => r.field_id));
  return required.filter((f) => !has.has(f.id));
}

// ---- the list filter: custom_field.<key>=<value> ----

/** One condition: equality (a multi-select: contains; a checkbox: true or false). */
export interface CustomFieldCondition {
  fieldId: string;
  column: 'value_text' | 'value_number';
  value: string | number;
  /** A checkbox asked for false: owners without a ticked value. */
  negate: boolean;
}

export const MAX_FIELD_CONDITIONS = 20;

/** Reads `custom_field.<key>` query parameters against the workspace's fields; a 400 names the bad one. */
export async function customFieldConditions(
  db: Db,
  workspaceId: string,
  object: CustomFieldObject,
  raw: readonly { key: string; value: string }[],
): Promise<CustomFieldCondition[]> {
  if (raw.length === 0) return [];
  const refuse = (key: string, message: string): never => {
    throw invalid(`custom_field.${key}: ${message}`, { issues: [{ path: `custom_field.${key}`, message }] });
  };
  if (raw.length > MAX_FIELD_CONDITIONS) refuse(raw[0].key, `at most ${MAX_FIELD_CONDITIONS} custom field conditions`);
  const fields = new Map((await fieldsOfObject(db, workspaceId, object)).map((f) => [f.key, f]));
  return raw.map(({ key, value }) => {
    const field = fields.get(key);
    if (!field) return refuse(key, `no ${object} field has this key`);
    switch (field.type) {
      case 'number': {
        const n = Number(value);
        if (value.trim() === '' || !Number.isFinite(n)) return refuse(key, 'a number');
        return { fieldId: field.id, column: 'value_number', value: n, negate: false };
      }
      case 'checkbox':
        if (value !== 'true' && value !== 'false') return refuse(key, 'true or false');
        return { fieldId: field.id, column: 'value_number', value: 1, negate: value === 'false' };
      case 'date':
        if (!isCalendarDate(value)) return refuse(key, 'a date as YYYY-MM-DD');
        return { fieldId: field.id, column: 'value_text', value, negate: false };
      case 'single_select':
      case 'multi_select':
        if (!field.options?.includes(value)) return refuse(key, `one of the field’s options (${(field.options ?? []).join(', ')})`);
        return { fieldId: field.id, column: 'value_text', value, negate: false };
      default:
        return { fieldId: field.id, column: 'value_text', value, negate: false };
    }
  });
}

/**
 * A where-clause for a list query: the owner (`ownerColumn`, e.g. `conversations.id`) matches every
 * condition. Each is an indexed lookup (field, value) → owners on both dialects.
 */
export function matchCustomFields(conditions: readonly CustomFieldCondition[], ownerColumn: string): Expression<SqlBool> {
  const parts = conditions.map(
    (c) =>
      sql<SqlBool>`${sql.ref(ownerColumn)} ${c.negate ? sql`not in` : sql`in`} (select owner_id from custom_field_values where field_id = ${c.fieldId} and ${sql.ref(c.column)} = ${c.value})`,
  );
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

/** YYYY-MM-DD that names a real day. */
export function isCalendarDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return y >= 1000 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The `custom_field.<key>` parameters of a query string (every value of a repeated one). */
export function customFieldParams(queries: Record<string, string[]>): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  for (const [name, values] of Object.entries(queries)) {
    if (!name.startsWith('custom_field.')) continue;
    for (const value of values) out.push({ key: name.slice('custom_field.'.length), value });
  }
  return out;
}
