// The workspace's custom field definitions, and which conversation's closing was refused for
// empty required fields (the details column marks them).
import { signal } from '@preact/signals';
import { ApiError, api, type Schemas } from '../api';
import { t } from '../i18n';

export type CustomField = Schemas['CustomField'];
export type FieldValues = Schemas['CustomFieldValues'];
export const customFields = signal<CustomField[]>([]);

let asked = false;
/** Loads the definitions once per page load (Settings reloads them after each change). */
export function ensureCustomFields(): void {
  if (asked) return;
  asked = true;
  void loadCustomFields().catch(() => {
    asked = false;
  });
}

export async function loadCustomFields(): Promise<void> {
  const res = await api.GET('/v1/custom-fields');
  if (res.data) customFields.value = res.data.data;
}

/** The conversation whose closing was just refused (cleared when it closes or another opens). */
export const closeRefused = signal<string | null>(null);

/** Whether a failed change was the server refusing to close for empty required fields. */
export function isCloseRefusal(e: unknown): boolean {
  return e instanceof ApiError && e.code === 'custom_fields_required';
}

/** The labels of the required conversation fields that are empty in these values. */
export function missingRequired(values: FieldValues | undefined): string[] {
  return customFields.value.filter((f) => f.object === 'conversation' && f.required_before_closing && isEmpty(values?.[f.key])).map((f) => f.label);
}

export function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
}

/** A timeline line for a change of a custom field (`custom_fields.<key>` in the event's changes), else null. */
export function customFieldEventText(field: string, change: { from: unknown; to: unknown }): string | null {
  if (!field.startsWith('custom_fields.')) return null;
  const key = field.slice('custom_fields.'.length);
  const name = customFields.value.find((f) => f.object === 'conversation' && f.key === key)?.label ?? key;
  if (isEmpty(change.to)) return t('cf.event_cleared', { name });
  const v = change.to;
  const value = Array.isArray(v) ? v.join(', ') : typeof v === 'boolean' ? t(v ? 'cf.yes' : 'cf.no') : String(v);
  return t('cf.event_set', { name, value });
}
