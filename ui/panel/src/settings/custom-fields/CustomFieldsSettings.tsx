// Settings → Custom fields: conversation fields and contact fields, each list in its order. Owners
// and admins add, edit (label, options, required before closing), reorder (move up / down) and
// delete them (the confirmation says the values go too); others read.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { FormError } from '../../components/FormError';
import { Loading } from '../../components/Loading';
import { type CustomField, customFields, loadCustomFields } from '../../custom-fields';
import { t } from '../../i18n';
import { membership, toast } from '../../state';

type Type = CustomField['type'];
type Obj = CustomField['object'];
const TYPES: Type[] = ['text', 'number', 'date', 'single_select', 'multi_select', 'checkbox', 'link'];
const isSelect = (type: Type) => type === 'single_select' || type === 'multi_select';
const slug = (label: string) =>
  label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ı/g, 'i')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 48);
const optionLines = (text: string) =>
  text
    .split('\n')
    .map((o) => o.trim())
    .filter(Boolean);

export function CustomFieldsSettings() {
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const reload = () =>
    loadCustomFields().then(
      () => {
        setLoaded(true);
        setLoadError(null);
      },
      (e) => setLoadError(errorText(e)),
    );
  useEffect(() => void reload(), []);
  return (
    <>
      <h1>{t('cf.title')}</h1>
      <p class="lead">{t('cf.lead')}</p>
      {manager && <NewField onSaved={reload} />}
      {!loaded ? (
        <Loading error={loadError} retry={reload} />
      ) : (
        (['conversation', 'contact'] as const).map((object) => <FieldList key={object} object={object} manager={manager} onSaved={reload} />)
      )}
    </>
  );
}

function NewField(props: { onSaved: () => Promise<void> }) {
  const [object, setObject] = useState<Obj>('conversation');
  const [label, setLabel] = useState('');
  const [key, setKey] = useState('');
  const [keyEdited, setKeyEdited] = useState(false);
  const [type, setType] = useState<Type>('text');
  const [options, setOptions] = useState('');
  const [required, setRequired] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="card"
      aria-labelledby="cf-new-title"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await must(
            api.POST('/v1/custom-fields', {
              body: {
                object,
                key: key.trim(),
                label: label.trim(),
                type,
                ...(isSelect(type) ? { options: optionLines(options) } : {}),
                ...(object === 'conversation' ? { required_before_closing: required } : {}),
              },
            }),
          );
          setLabel('');
          setKey('');
          setKeyEdited(false);
          setOptions('');
          setRequired(false);
          setError(null);
          toast(t('cf.created'));
          await props.onSaved();
        } catch (err) {
          setError(errorText(err));
        }
      }}
    >
      <h2 id="cf-new-title" style={{ marginTop: 0 }}>
        {t('cf.new')}
      </h2>
      <div class="cf-grid">
        <div class="field">
          <label for="cf-new-object">{t('cf.object')}</label>
          <select id="cf-new-object" class="select" value={object} onChange={(e) => setObject(e.currentTarget.value as Obj)}>
            <option value="conversation">{t('cf.object_conversation')}</option>
            <option value="contact">{t('cf.object_contact')}</option>
          </select>
        </div>
        <div class="field">
          <label for="cf-new-type">{t('cf.type')}</label>
          <select id="cf-new-type" class="select" value={type} onChange={(e) => setType(e.currentTarget.value as Type)}>
            {TYPES.map((x) => (
              <option key={x} value={x}>
                {t(`cf.type_${x}`)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="cf-new-label">{t('cf.label')}</label>
          <input
            id="cf-new-label"
            class="input"
            required
            maxLength={100}
            value={label}
            onInput={(e) => {
              setLabel(e.currentTarget.value);
              if (!keyEdited) setKey(slug(e.currentTarget.value));
            }}
          />
        </div>
        <div class="field">
          <label for="cf-new-key">{t('cf.key')}</label>
          <input
            id="cf-new-key"
            class="input mono"
            required
            maxLength={48}
            pattern="[a-z][a-z0-9_]*"
            aria-describedby="cf-new-key-hint"
            value={key}
            onInput={(e) => {
              setKey(e.currentTarget.value);
              setKeyEdited(true);
            }}
          />
          <p id="cf-new-key-hint" class="hint">
            {t('cf.key_hint')}
          </p>
        </div>
      </div>
      {isSelect(type) && <OptionsInput id="cf-new-options" value={options} onInput={setOptions} />}
      {object === 'conversation' && <RequiredInput id="cf-new-required" checked={required} onChange={setRequired} />}
      <FormError error={error} />
      <button class="btn btn-primary" type="submit">
        {t('cf.create')}
      </button>
    </form>
  );
}

function OptionsInput(props: { id: string; value: string; onInput: (v: string) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{t('cf.options')}</label>
      <textarea
        id={props.id}
        class="textarea"
        rows={4}
        required
        aria-describedby={`${props.id}-hint`}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      <p id={`${props.id}-hint`} class="hint">
        {t('cf.options_hint')}
      </p>
    </div>
  );
}

function RequiredInput(props: { id: string; checked: boolean; onChange: (v: boolean) => void }) {
  return (
    <div class="field">
      <label class="check-row" for={props.id}>
        <input
          id={props.id}
          type="checkbox"
          checked={props.checked}
          aria-describedby={`${props.id}-hint`}
          onChange={(e) => props.onChange(e.currentTarget.checked)}
        />
        {t('cf.required')}
      </label>
      <p id={`${props.id}-hint`} class="hint">
        {t('cf.required_hint')}
      </p>
    </div>
  );
}

function FieldList(props: { object: Obj; manager: boolean; onSaved: () => Promise<void> }) {
  const list = customFields.value.filter((f) => f.object === props.object);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<CustomField | null>(null);
  const title = props.object === 'conversation' ? t('cf.conversation_fields') : t('cf.contact_fields');

  // Moving swaps two neighbours; every field of the list gets its index as position.
  async function move(index: number, by: -1 | 1) {
    const order = [...list];
    const [item] = order.splice(index, 1);
    order.splice(index + by, 0, item);
    try {
      for (const [position, f] of order.entries()) {
        if (f.position !== position) await must(api.PATCH('/v1/custom-fields/{fieldId}', { params: { path: { fieldId: f.id } }, body: { position } }));
      }
      await props.onSaved();
      document.getElementById(`cf-${by < 0 ? 'up' : 'down'}-${item.id}`)?.focus();
    } catch (e) {
      toast(t('action.failed', { error: errorText(e) }));
    }
  }

  return (
    <section class="card" aria-labelledby={`cf-list-${props.object}`}>
      <h2 id={`cf-list-${props.object}`} style={{ marginTop: 0 }}>
        {title}
      </h2>
      {list.length === 0 ? (
        <p class="muted">{props.object === 'conversation' ? t('cf.none_conversation') : t('cf.none_contact')}</p>
      ) : (
        <ul role="list" class="cf-list">
          {list.map((f, i) => (
            <li key={f.id} class="cf-row">
              {editing === f.id ? (
                <FieldEditor field={f} onDone={() => setEditing(null)} onSaved={props.onSaved} />
              ) : (
                <>
                  <div class="cf-row-main">
                    <strong>{f.label}</strong> <span class="mono muted">{f.key}</span>
                    <span class="muted">
                      {' '}
                      · {t(`cf.type_${f.type}`)}
                      {f.options ? `: ${f.options.join(', ')}` : ''}
                    </span>
                    {f.required_before_closing && <span class="badge cf-required-badge">{t('cf.required_badge')}</span>}
                  </div>
                  {props.manager && (
                    <div class="row-actions">
                      <button
                        id={`cf-up-${f.id}`}
                        class="btn btn-ghost"
                        type="button"
                        disabled={i === 0}
                        aria-label={t('cf.move_up', { name: f.label })}
                        title={t('cf.move_up', { name: f.label })}
                        onClick={() => void move(i, -1)}
                      >
                        ↑
                      </button>
                      <button
                        id={`cf-down-${f.id}`}
                        class="btn btn-ghost"
                        type="button"
                        disabled={i === list.length - 1}
                        aria-label={t('cf.move_down', { name: f.label })}
                        title={t('cf.move_down', { name: f.label })}
                        onClick={() => void move(i, 1)}
                      >
                        ↓
                      </button>
                      <button class="btn" type="button" aria-label={t('cf.edit_named', { name: f.label })} onClick={() => setEditing(f.id)}>
                        {t('cf.edit')}
                      </button>
                      <button class="btn btn-danger" type="button" aria-label={t('cf.delete_named', { name: f.label })} onClick={() => setDeleting(f)}>
                        {t('cf.delete')}
                      </button>
                    </div>
                  )}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {deleting && (
        <Confirm
          title={t('cf.delete_named', { name: deleting.label })}
          lead={t('cf.delete_lead', { name: deleting.label, object: t(`cf.object_word_${deleting.object}`) })}
          action={t('cf.delete')}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/custom-fields/{fieldId}', { params: { path: { fieldId: deleting.id } } }));
              setDeleting(null);
              toast(t('cf.deleted'));
              await props.onSaved();
            } catch (e) {
              toast(t('action.failed', { error: errorText(e) }));
            }
          }}
        />
      )}
    </section>
  );
}

function FieldEditor(props: { field: CustomField; onDone: () => void; onSaved: () => Promise<void> }) {
  const f = props.field;
  const [label, setLabel] = useState(f.label);
  const [options, setOptions] = useState((f.options ?? []).join('\n'));
  const [required, setRequired] = useState(f.required_before_closing);
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="cf-edit"
      aria-label={t('cf.edit_named', { name: f.label })}
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await must(
            api.PATCH('/v1/custom-fields/{fieldId}', {
              params: { path: { fieldId: f.id } },
              body: {
                label: label.trim(),
                ...(isSelect(f.type) ? { options: optionLines(options) } : {}),
                ...(f.object === 'conversation' ? { required_before_closing: required } : {}),
              },
            }),
          );
          toast(t('cf.saved'));
          props.onDone();
          await props.onSaved();
        } catch (err) {
          setError(errorText(err));
        }
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onDone();
      }}
    >
      <div class="field">
        <label for={`cf-edit-label-${f.id}`}>{t('cf.label')}</label>
        <input
          id={`cf-edit-label-${f.id}`}
          data-autofocus
          class="input"
          required
          maxLength={100}
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
        />
      </div>
      {isSelect(f.type) && <OptionsInput id={`cf-edit-options-${f.id}`} value={options} onInput={setOptions} />}
      {f.object === 'conversation' && <RequiredInput id={`cf-edit-required-${f.id}`} checked={required} onChange={setRequired} />}
      <FormError error={error} />
      <div class="row-actions">
        <button class="btn btn-primary" type="submit">
          {t('cf.save')}
        </button>
        <button class="btn" type="button" onClick={props.onDone}>
          {t('cf.cancel')}
        </button>
      </div>
    </form>
  );
}
