// Custom field definitions (issue 37): typed fields a workspace defines for its conversations and
// its contacts, managed by owners and admins. A field's object, key and type never change (the key
// is what the API and webhooks name its values by); deleting a field, or an option of a select,
// removes the values that used it in the same transaction.
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { CustomFieldObject, CustomFieldType, Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { definitionOf, type FieldDefinition } from './store.js';

export const OBJECTS: readonly CustomFieldObject[] = ['conversation', 'contact'];
export const TYPES: readonly CustomFieldType[] = ['text', 'number', 'date', 'single_select', 'multi_select', 'checkbox', 'link'];
export const MAX_FIELDS_PER_OBJECT = 100;
export const MAX_OPTIONS = 100;
export const MAX_OPTION_CHARS = 100;
export const MAX_LABEL_CHARS = 100;
export const MAX_POSITION = 100_000;
export const KEY_PATTERN = /^[a-z][a-z0-9_]{0,47}$/;

export interface FieldInput {
  object?: CustomFieldObject;
  key?: string;
  label?: string;
  type?: CustomFieldType;
  options?: string[] | null;
  requiredBeforeClosing?: boolean;
  position?: number;
}

type Issue = { path: string; message: string };

function refuse(issues: Issue[]): never {
  throw invalid(issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
}

const isSelect = (type: CustomFieldType) => type === 'single_select' || type === 'multi_select';

function checkOptions(options: string[], issues: Issue[]): string[] {
  const out = options.map((o) => o.trim());
  if (out.length === 0 || out.length > MAX_OPTIONS) issues.push({ path: 'options', message: `1 to ${MAX_OPTIONS} options` });
  out.forEach((o, n) => {
    if (!o || charCount(o) > MAX_OPTION_CHARS || /[\u0000-\u001f\u007f]/.test(o))
      issues.push({ path: `options.${n}`, message: `1 to ${MAX_OPTION_CHARS} printable characters` });
    else if (out.indexOf(o) !== n) issues.push({ path: `options.${n}`, message: `“${o}” is listed twice` });
  });
  return out;
}

function checkLabel(label: string, issues: Issue[]): string {
  const out = label.trim();
  if (!out || charCount(out) > MAX_LABEL_CHARS || /[\u0000-\u001f\u007f]/.test(out))
    issues.push({ path: 'label', message: `1 to ${MAX_LABEL_CHARS} printable characters` });
  return out;
}

export async function listFields(ctx: Pick<Ctx, 'db'>, access: Access, object?: CustomFieldObject): Promise<FieldDefinition[]> {
  authorize(access, 'custom_fields:read');
  const rows = await ctx.db
    .selectFrom('custom_fields')
    .selectAll()
    .where('workspace_id', '=', access.workspaceId)
    .$if(object !== undefined, (q) => q.where('object', '=', object!))
    .orderBy('object', 'desc')
    .orderBy('position')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(definitionOf);
}

async function findField(db: Db, workspaceId: string, id: string): Promise<FieldDefinition> {
  const row = await db.selectFrom('custom_fields').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('custom field');
  return definitionOf(row);
}

export async function getField(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<FieldDefinition> {
  authorize(access, 'custom_fields:read');
  return findField(ctx.db, access.workspaceId, id);
}

export async function createField(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, input: FieldInput): Promise<FieldDefinition> {
  authorize(access, 'custom_fields:manage');
  const issues: Issue[] = [];
  const { object, type, key } = input;
  if (!object || !OBJECTS.includes(object)) issues.push({ path: 'object', message: 'conversation or contact' });
  if (!key || !KEY_PATTERN.test(key)) issues.push({ path: 'key', message: 'a slug: a lower-case letter, then letters, digits or _ (at most 48)' });
  const label = checkLabel(input.label ?? '', issues);
  if (!type || !TYPES.includes(type)) issues.push({ path: 'type', message: TYPES.join(', ') });
  let options: string[] | null = null;
  if (type && isSelect(type)) options = checkOptions(input.options ?? [], issues);
  else if (input.options != null) issues.push({ path: 'options', message: 'only single_select and multi_select fields have options' });
  if (input.requiredBeforeClosing && object === 'contact')
    issues.push({ path: 'required_before_closing', message: 'only conversation fields can be required before closing' });
  if (issues.length) refuse(issues);
  return inTransaction(ctx.db, async (trx) => {
    const existing = await trx
      .selectFrom('custom_fields')
      .select(['key', 'position'])
      .where('workspace_id', '=', access.workspaceId)
      .where('object', '=', object!)
      .execute();
    if (existing.some((f) => f.key === key)) throw conflict(`a ${object} field with the key “${key}” exists already`, 'custom_field_key_taken');
    if (existing.length >= MAX_FIELDS_PER_OBJECT) throw conflict(`a workspace has at most ${MAX_FIELDS_PER_OBJECT} ${object} fields`, 'too_many_custom_fields');
    const now = iso(ctx.clock.now());
    const row = {
      id: newId('cf'),
      workspace_id: access.workspaceId,
      object: object!,
      key: key!,
      label,
      type: type!,
      options: options ? JSON.stringify(options) : null,
      required_before_closing: input.requiredBeforeClosing ? 1 : 0,
      position: input.position ?? existing.reduce((max, f) => Math.max(max, f.position + 1), 0),
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('custom_fields').values(row).execute();
    return definitionOf(row);
  });
}

export async function updateField(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  access: Access,
  id: string,
  input: Pick<FieldInput, 'label' | 'options' | 'requiredBeforeClosing' | 'position'>,
): Promise<FieldDefinition> {
  authorize(access, 'custom_fields:manage');
  return inTransaction(ctx.db, async (trx) => {
    const field = await findField(trx, access.workspaceId, id);
    const issues: Issue[] = [];
    const set: Record<string, string | number | null> = {};
    if (input.label !== undefined) set.label = checkLabel(input.label, issues);
    let removed: string[] = [];
    if (input.options !== undefined) {
      if (!isSelect(field.type)) issues.push({ path: 'options', message: 'only single_select and multi_select fields have options' });
      else {
        const options = checkOptions(input.options ?? [], issues);
        removed = (field.options ?? []).filter((o) => !options.includes(o));
        set.options = JSON.stringify(options);
      }
    }
    if (input.requiredBeforeClosing !== undefined) {
      if (input.requiredBeforeClosing && field.object === 'contact')
        issues.push({ path: 'required_before_closing', message: 'only conversation fields can be required before closing' });
      set.required_before_closing = input.requiredBeforeClosing ? 1 : 0;
    }
    if (input.position !== undefined) set.position = input.position;
    if (issues.length) refuse(issues);
    if (Object.keys(set).length === 0) return field;
    set.updated_at = iso(ctx.clock.now());
    await trx.updateTable('custom_fields').set(set).where('id', '=', id).execute();
    // An option taken away takes its values with it (a multi-select keeps its other options).
    if (removed.length) await trx.deleteFrom('custom_field_values').where('field_id', '=', id).where('value_text', 'in', removed).execute();
    return findField(trx, access.workspaceId, id);
  });
}

/** Deletes a field and every value of it; returns how many values went. */
export async function deleteField(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<{ values: number }> {
  authorize(access, 'custom_fields:manage');
  return inTransaction(ctx.db, async (trx) => {
    await findField(trx, access.workspaceId, id);
    const owners = await trx.selectFrom('custom_field_values').select('owner_id').distinct().where('field_id', '=', id).execute();
    await trx.deleteFrom('custom_field_values').where('field_id', '=', id).execute();
    await trx.deleteFrom('custom_fields').where('id', '=', id).execute();
    return { values: owners.length };
  });
}

/**
 * A deleted workspace's fields and values, at most about `batch` owners' values per call (a step of
 * src/lifecycle/registry.ts). Returns the rows deleted; 0 when nothing is left.
 */
export async function deleteWorkspaceCustomFields(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const field = await ctx.db.selectFrom('custom_fields').select('id').where('workspace_id', '=', workspaceId).limit(1).executeTakeFirst();
  if (!field) return 0;
  const owners = (
    await ctx.db.selectFrom('custom_field_values').select('owner_id').where('field_id', '=', field.id).orderBy('owner_id').limit(batch).execute()
  ).map((r) => r.owner_id);
  if (owners.length) {
    const r = await ctx.db.deleteFrom('custom_field_values').where('field_id', '=', field.id).where('owner_id', 'in', owners).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
  const r = await ctx.db.deleteFrom('custom_fields').where('id', '=', field.id).executeTakeFirst();
  return Number(r.numDeletedRows);
}
