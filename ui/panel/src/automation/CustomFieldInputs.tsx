// Conversation custom fields in rules and macros: the field picker and a value input that fits the
// field's type (its options, yes/no, a number, a date, or text). Conditions keep the value as text
// (the server compares it as text, a multi-select by each of its options); set_custom_field sends
// the typed value (a multi-select the one option chosen here).
import { customFields } from '../custom-fields';
import { t } from '../i18n';

export type CustomFieldValue = string | number | boolean | string[] | null;

export const conversationFields = () => customFields.value.filter((f) => f.object === 'conversation');

/** The value as the select or input shows it. */
export function shownValue(v: CustomFieldValue | undefined): string {
  if (v === null || v === undefined) return '';
  return Array.isArray(v) ? (v[0] ?? '') : String(v);
}

/** What set_custom_field sends for the text typed or chosen, by the field's type. */
export function typedValue(key: string, text: string): CustomFieldValue {
  const field = conversationFields().find((f) => f.key === key);
  if (!field || text === '') return field?.type === 'multi_select' ? [] : text === '' ? null : text;
  if (field.type === 'number') return Number(text);
  if (field.type === 'checkbox') return text === 'true';
  if (field.type === 'multi_select') return [text];
  return text;
}

export function CustomFieldKey(props: { id: string; label?: string; value: string; onChange: (key: string) => void }) {
  const fields = conversationFields();
  return (
    <div class="field">
      <label for={props.id}>{props.label ?? t('auto.custom_field')}</label>
      <select id={props.id} class="select" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">{t('cond.choose')}</option>
        {fields.map((f) => (
          <option key={f.key} value={f.key}>
            {f.label}
          </option>
        ))}
      </select>
      {fields.length === 0 && <span class="hint">{t('auto.no_custom_fields')}</span>}
    </div>
  );
}

export function CustomFieldValueInput(props: { id: string; fieldKey: string; value: string; onChange: (text: string) => void }) {
  const field = conversationFields().find((f) => f.key === props.fieldKey);
  const choices = field?.options?.length ? field.options : field?.type === 'checkbox' ? ['true', 'false'] : null;
  return (
    <div class="field auto-grow">
      <label for={props.id}>{t('auto.value')}</label>
      {choices ? (
        <select id={props.id} class="select" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
          <option value="">{t('cond.choose')}</option>
          {choices.map((o) => (
            <option key={o} value={o}>
              {o === 'true' && field?.type === 'checkbox' ? t('auto.yes') : o === 'false' && field?.type === 'checkbox' ? t('auto.no') : o}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={props.id}
          class="input"
          type={(field?.type === 'number' ? 'number' : field?.type === 'date' ? 'date' : field?.type === 'link' ? 'url' : 'text') as 'text'}
          maxLength={500}
          value={props.value}
          onInput={(e) => props.onChange(e.currentTarget.value)}
        />
      )}
    </div>
  );
}
