// The contact in the details column: name and addresses (editable), and custom attributes to add,
// edit and remove. The API takes any JSON as an attribute value; the panel offers the simple kinds
// (text, number, yes/no) and shows anything else read-only. Every change is one
// PATCH /v1/contacts/{id} (attributes merge; null removes a key), and its answer replaces the contact.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { FormError } from '../components/FormError';
import { t } from '../i18n';
import { toast } from '../state';

type Contact = Schemas['Contact'];

type Kind = 'text' | 'number' | 'bool';
const KEY_MAX = 64;
const TEXT_MAX = 1000;

const kindOf = (v: unknown): Kind | null => (typeof v === 'string' ? 'text' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : null);

function shown(v: unknown): string {
  if (typeof v === 'boolean') return v ? t('attr.yes') : t('attr.no');
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  return JSON.stringify(v);
}

export function ContactCard(props: { contact: Contact; onChanged: (c: Contact) => void; onMergeInto: (owner: Contact) => void }) {
  const c = props.contact;
  const [editing, setEditing] = useState<'contact' | { key: string | null } | null>(null);
  const attributes = Object.entries(c.attributes ?? {});

  async function patch(body: { name?: string | null; emails?: string[]; attributes?: Record<string, unknown> }) {
    const updated = await must(api.PATCH('/v1/contacts/{contactId}', { params: { path: { contactId: c.id } }, body }));
    props.onChanged(updated);
    return updated;
  }

  return (
    <>
      {editing === 'contact' ? (
        <ContactForm contact={c} onCancel={() => setEditing(null)} onSave={async (body) => (await patch(body), setEditing(null), toast(t('contact.saved')))} />
      ) : (
        <>
          <p style={{ margin: 0, fontWeight: 600 }}>{c.name ?? t('details.no_name')}</p>
          {c.emails.map((e) => (
            <p key={e} class="muted" style={{ margin: 0, overflowWrap: 'anywhere' }}>
              {e}
            </p>
          ))}
          {c.unverified_email && (
            <UnverifiedEmail contact={c} onConfirm={() => patch({ emails: [...c.emails, c.unverified_email!] })} onMergeInto={props.onMergeInto} />
          )}
          <button class="btn btn-ghost" type="button" onClick={() => setEditing('contact')}>
            {t('contact.edit')}
          </button>
          {c.emails.length > 0 && (
            <a class="btn btn-ghost" href={`/conversations?write_to=${encodeURIComponent(c.id)}`}>
              {t('compose.write_to', { name: c.name ?? c.emails[0] })}
            </a>
          )}
        </>
      )}
      <h4 class="attr-title" id="attr-title">
        {t('details.attributes')}
      </h4>
      {attributes.length === 0 && (
        <p class="muted" style={{ margin: 0 }}>
          {t('attr.none')}
        </p>
      )}
      {attributes.length > 0 && (
        <ul role="list" class="attrs" aria-labelledby="attr-title">
          {attributes.map(([key, value]) =>
            typeof editing === 'object' && editing !== null && editing.key === key ? (
              <li key={key}>
                <AttributeForm
                  initial={{ key, value }}
                  onCancel={() => setEditing(null)}
                  onSave={async (k, v) => (await patch({ attributes: { [k]: v } }), setEditing(null))}
                />
              </li>
            ) : (
              <li key={key} class="attr">
                <span class="attr-key">{key}</span>
                <span class="attr-value" title={kindOf(value) ? undefined : t('attr.structured')}>
                  {shown(value)}
                </span>
                <span class="attr-actions">
                  {kindOf(value) && (
                    <button class="btn btn-ghost" type="button" aria-label={t('attr.edit', { key })} onClick={() => setEditing({ key })}>
                      ✎
                    </button>
                  )}
                  <button
                    class="btn btn-ghost"
                    type="button"
                    aria-label={t('attr.remove', { key })}
                    onClick={async () => {
                      try {
                        await patch({ attributes: { [key]: null } });
                        toast(t('attr.removed', { key }));
                      } catch (e) {
                        toast(t('action.failed', { error: errorText(e) }));
                      }
                    }}
                  >
                    ×
                  </button>
                </span>
              </li>
            ),
          )}
        </ul>
      )}
      {typeof editing === 'object' && editing !== null && editing.key === null ? (
        <AttributeForm
          initial={null}
          taken={attributes.map(([k]) => k)}
          onCancel={() => setEditing(null)}
          onSave={async (k, v) => (await patch({ attributes: { [k]: v } }), setEditing(null))}
        />
      ) : (
        <button class="btn" type="button" onClick={() => setEditing({ key: null })}>
          {t('attr.add')}
        </button>
      )}
    </>
  );
}

function ContactForm(props: { contact: Contact; onCancel: () => void; onSave: (body: { name: string | null; emails: string[] }) => Promise<unknown> }) {
  const [name, setName] = useState(props.contact.name ?? '');
  const [emails, setEmails] = useState(props.contact.emails.join('\n'));
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      class="attr-form"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          await props.onSave({ name: name.trim() || null, emails: emails.split(/[\s,;]+/).filter(Boolean) });
        } catch (err) {
          setError(errorText(err));
        }
      }}
    >
      <div class="field">
        <label for="contact-name">{t('contact.name')}</label>
        <input id="contact-name" class="input" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="contact-emails">{t('contact.emails')}</label>
        <textarea id="contact-emails" class="textarea" rows={2} value={emails} onInput={(e) => setEmails(e.currentTarget.value)} />
      </div>
      <SaveOrCancel error={error} onCancel={props.onCancel} />
    </form>
  );
}

function AttributeForm(props: {
  initial: { key: string; value: unknown } | null;
  taken?: string[];
  onCancel: () => void;
  onSave: (key: string, value: string | number | boolean) => Promise<unknown>;
}) {
  const init = props.initial;
  const [key, setKey] = useState(init?.key ?? '');
  const [kind, setKind] = useState<Kind>((init && kindOf(init.value)) || 'text');
  const [value, setValue] = useState(init && typeof init.value !== 'boolean' ? String(init.value) : '');
  const [flag, setFlag] = useState(init?.value === true);
  const [error, setError] = useState<string | null>(null);
  const id = init ? `attr-${init.key.replace(/[^\w-]/g, '_')}` : 'attr-new';

  /** The value to store, or an error message for the person. */
  function parse(): { ok: true; value: string | number | boolean } | { ok: false; error: string } {
    if (kind === 'bool') return { ok: true, value: flag };
    if (kind === 'number') {
      const n = Number(value.trim().replace(',', '.'));
      return value.trim() !== '' && Number.isFinite(n) ? { ok: true, value: n } : { ok: false, error: t('attr.bad_number') };
    }
    return value.length <= TEXT_MAX ? { ok: true, value } : { ok: false, error: t('attr.bad_text') };
  }

  return (
    <form
      class="attr-form"
      aria-label={init ? t('attr.edit', { key: init.key }) : t('attr.add')}
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        const k = key.trim();
        if (!k || k.length > KEY_MAX) return setError(t('attr.bad_key'));
        const parsed = parse();
        if (!parsed.ok) return setError(parsed.error);
        try {
          await props.onSave(k, parsed.value);
        } catch (err) {
          setError(errorText(err));
        }
      }}
    >
      <div class="field">
        <label for={`${id}-key`}>{t('attr.key')}</label>
        <input id={`${id}-key`} class="input" maxLength={KEY_MAX} value={key} readOnly={!!init} onInput={(e) => setKey(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for={`${id}-type`}>{t('attr.type')}</label>
        <select id={`${id}-type`} class="select" value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
          <option value="text">{t('attr.type_text')}</option>
          <option value="number">{t('attr.type_number')}</option>
          <option value="bool">{t('attr.type_bool')}</option>
        </select>
      </div>
      <div class="field">
        <label for={`${id}-value`}>{t('attr.value')}</label>
        {kind === 'bool' ? (
          <select id={`${id}-value`} class="select" value={flag ? 'yes' : 'no'} onChange={(e) => setFlag(e.currentTarget.value === 'yes')}>
            <option value="yes">{t('attr.yes')}</option>
            <option value="no">{t('attr.no')}</option>
          </select>
        ) : (
          <input
            id={`${id}-value`}
            class="input"
            inputMode={kind === 'number' ? 'decimal' : undefined}
            maxLength={kind === 'text' ? TEXT_MAX : 40}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        )}
      </div>
      <SaveOrCancel error={error} onCancel={props.onCancel} />
    </form>
  );
}

/** The end of the card's inline forms: the error, Save (the form's submit) and Cancel. */
function SaveOrCancel(props: { error: string | null; onCancel: () => void }) {
  return (
    <>
      <FormError error={props.error} />
      <div class="row-actions">
        <button class="btn btn-primary" type="submit">
          {t('settings.save')}
        </button>
        <button class="btn" type="button" onClick={props.onCancel}>
          {t('attr.cancel')}
        </button>
      </div>
    </>
  );
}

/**
 * An address a chat visitor typed without proof. It never finds or joins the contact that owns it:
 * the team checks, then merges this contact into the owner or confirms the address.
 */
function UnverifiedEmail(props: { contact: Contact; onConfirm: () => Promise<unknown>; onMergeInto: (owner: Contact) => void }) {
  const address = props.contact.unverified_email!;
  const [owner, setOwner] = useState<Contact | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    setOwner(undefined);
    void api.GET('/v1/contacts', { params: { query: { email: address, limit: 1 } } }).then((r) => {
      if (live) setOwner(r.data?.data.find((o) => o.id !== props.contact.id) ?? null);
    });
    return () => {
      live = false;
    };
  }, [address, props.contact.id]);
  return (
    <div class="unverified-email">
      <p style={{ margin: 0, overflowWrap: 'anywhere' }}>
        <span class="muted">{address}</span> <span class="badge badge-warn">{t('contact.unverified')}</span>
      </p>
      <p class="muted" style={{ margin: 0 }}>
        {owner ? t('contact.unverified_owned', { name: owner.name ?? owner.emails[0] ?? owner.id }) : t('contact.unverified_hint')}
      </p>
      {owner ? (
        <button class="btn" type="button" onClick={() => props.onMergeInto(owner)}>
          {t('contact.unverified_merge', { name: owner.name ?? owner.emails[0] ?? owner.id })}
        </button>
      ) : owner === null ? (
        <button
          class="btn"
          type="button"
          onClick={async () => {
            try {
              await props.onConfirm();
              toast(t('contact.saved'));
            } catch (e) {
              toast(t('action.failed', { error: errorText(e) }));
            }
          }}
        >
          {t('contact.unverified_confirm')}
        </button>
      ) : null}
    </div>
  );
}
