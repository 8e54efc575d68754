// A conversation's or a contact's custom fields in its details: one input per field, by type (date
// input, selects, checkboxes, a clickable link), each saved on its own with one PATCH of
// `custom_fields`. Values are checked here first and the server's answer is shown under the field.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText } from '../api';
import { t } from '../i18n';
import { toast } from '../state';
import { type CustomField, customFields, ensureCustomFields, type FieldValues, isEmpty } from './state';

type Value = FieldValues[string];

export function CustomFieldsEditor(props: {
  object: 'conversation' | 'contact';
  ownerId: string;
  values: FieldValues | undefined;
  onSave: (patch: Record<string, Value>) => Promise<void>;
  /** Closing was refused: mark the empty required fields. */
  closeBlocked?: boolean;
}) {
  useEffect(ensureCustomFields, []);
  const fields = customFields.value.filter((f) => f.object === props.object);
  if (fields.length === 0) return null;
  return (
    <section class="cf-section" aria-labelledby={`cf-${props.object}-title`}>
      <h3 id={`cf-${props.object}-title`}>{t('cf.section')}</h3>
      {fields.map((f) => (
        <FieldInput
          key={`${props.ownerId}/${f.id}`}
          field={f}
          object={props.object}
          value={props.values?.[f.key] ?? null}
          onSave={props.onSave}
          blocked={!!props.closeBlocked && f.required_before_closing && isEmpty(props.values?.[f.key])}
        />
      ))}
    </section>
  );
}

function isWebLink(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !!url.hostname && !/\s/.test(text);
  } catch {
    return false;
  }
}

/** What the typed text becomes, or the message that says what is wrong. */
function parse(field: CustomField, text: string): { value: Value } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  if (field.type === 'number') {
    const n = Number(trimmed.replace(',', '.'));
    return Number.isFinite(n) ? { value: n } : { error: t('cf.bad_number') };
  }
  if (field.type === 'link') return isWebLink(trimmed) ? { value: trimmed } : { error: t('cf.bad_link') };
  if (field.type === 'date') return /^\d{4}-\d{2}-\d{2}$/.test(trimmed) ? { value: trimmed } : { error: t('cf.bad_date') };
  return { value: text };
}

const asText = (v: Value) => (v === null || v === undefined ? '' : Array.isArray(v) ? v.join(', ') : String(v));

function FieldInput(props: { field: CustomField; object: string; value: Value; onSave: (patch: Record<string, Value>) => Promise<void>; blocked: boolean }) {
  const f = props.field;
  const id = `cf-${props.object}-${f.key}`;
  const [draft, setDraft] = useState(asText(props.value));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setDraft(asText(props.value)), [JSON.stringify(props.value)]);

  async function save(value: Value) {
    if (JSON.stringify(value) === JSON.stringify(props.value ?? null)) return setError(null);
    try {
      await props.onSave({ [f.key]: value });
      setError(null);
      toast(t('cf.value_saved', { name: f.label }));
    } catch (e) {
      // The server names the field: "custom_fields.<key>: <what it takes>".
      const text = e instanceof ApiError && e.status === 400 ? e.message.replace(/^custom_fields\.[a-z0-9_]+: /, '') : errorText(e);
      setError(text);
    }
  }
  function commitText() {
    const r = parse(f, draft);
    if ('error' in r) setError(r.error);
    else void save(r.value);
  }
  const shownError = error ?? (props.blocked ? t('cf.required_empty') : null);
  const described = shownError ? `${id}-error` : undefined;
  const label = (
    <label for={id}>
      {f.label}
      {f.required_before_closing && <span class="cf-required"> · {t('cf.required_badge')}</span>}
    </label>
  );
  let control: JSX.Element;
  switch (f.type) {
    case 'checkbox':
      return (
        <div class="field cf-field">
          <label class="check-row" for={id}>
            <input
              id={id}
              type="checkbox"
              checked={props.value === true}
              aria-invalid={shownError ? true : undefined}
              aria-describedby={described}
              onChange={(e) => void save(e.currentTarget.checked)}
            />
            {f.label}
            {f.required_before_closing && <span class="cf-required"> · {t('cf.required_badge')}</span>}
          </label>
          {shownError && <ErrorLine id={`${id}-error`} text={shownError} />}
        </div>
      );
    case 'multi_select': {
      const chosen = Array.isArray(props.value) ? props.value : [];
      return (
        <fieldset class="field cf-field cf-multi" aria-describedby={described}>
          <legend>
            {f.label}
            {f.required_before_closing && <span class="cf-required"> · {t('cf.required_badge')}</span>}
          </legend>
          <div class="checks">
            {(f.options ?? []).map((o) => (
              <label key={o}>
                <input
                  type="checkbox"
                  checked={chosen.includes(o)}
                  onChange={(e) => {
                    const next = e.currentTarget.checked ? [...chosen, o] : chosen.filter((x) => x !== o);
                    void save(next.length ? next : null);
                  }}
                />
                {o}
              </label>
            ))}
          </div>
          {shownError && <ErrorLine id={`${id}-error`} text={shownError} />}
        </fieldset>
      );
    }
    case 'single_select':
      control = (
        <select
          id={id}
          class="select"
          value={typeof props.value === 'string' ? props.value : ''}
          aria-invalid={shownError ? true : undefined}
          aria-describedby={described}
          onChange={(e) => void save(e.currentTarget.value || null)}
        >
          <option value="">{t('cf.none_chosen')}</option>
          {(f.options ?? []).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      );
      break;
    case 'date':
      control = (
        <input
          id={id}
          class="input"
          type="date"
          value={draft}
          aria-invalid={shownError ? true : undefined}
          aria-describedby={described}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onChange={(e) => {
            const v = e.currentTarget.value;
            setDraft(v);
            const r = parse(f, v);
            if ('error' in r) setError(r.error);
            else void save(r.value);
          }}
        />
      );
      break;
    default:
      control = (
        <input
          id={id}
          class="input"
          type={(f.type === 'link' ? 'url' : 'text') as 'text'}
          inputMode={f.type === 'number' ? ('decimal' as const) : undefined}
          maxLength={2000}
          value={draft}
          aria-invalid={shownError ? true : undefined}
          aria-describedby={described}
          onInput={(e) => {
            setDraft(e.currentTarget.value);
            if (error) setError(null);
          }}
          onBlur={commitText}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              commitText();
            }
          }}
        />
      );
  }
  return (
    <div class="field cf-field">
      {label}
      {control}
      {f.type === 'link' && typeof props.value === 'string' && props.value && (
        <a class="cf-link" href={props.value} target="_blank" rel="noopener noreferrer nofollow">
          {t('cf.open_link')}: {props.value}
        </a>
      )}
      {shownError && <ErrorLine id={`${id}-error`} text={shownError} />}
    </div>
  );
}

function ErrorLine(props: { id: string; text: string }) {
  return (
    <p id={props.id} class="error-text" role="alert">
      {props.text}
    </p>
  );
}
