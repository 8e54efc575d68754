// Settings › My account: profile and language, passkeys, notifications, sessions, deleting the account.
import { useState } from 'preact/hooks';
import { ApiError, api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { FormError } from '../../components/FormError';
import { type Locale, pickLocale, setLocale, t } from '../../i18n';
import { NotificationSettings } from '../../notifications';
import { loadInboxes, me, toast } from '../../state';
import { AvailabilityControl } from '../../teams';
import { Passkeys } from './Passkeys';
import { Sessions } from './Sessions';

export function Account() {
  const person = me.value!.person;
  const [deleting, setDeleting] = useState(false);
  return (
    <>
      <h1>{t('settings.account')}</h1>
      <Profile />
      <AvailabilityControl />
      <Passkeys />
      <NotificationSettings />
      <Sessions />
      <section class="card danger-zone" aria-labelledby="acct-delete">
        <h2 id="acct-delete" style={{ marginTop: 0 }}>
          {t('account.delete')}
        </h2>
        <p>{t('account.delete_lead')}</p>
        <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
          {t('account.delete')}
        </button>
      </section>
      {deleting && (
        <Confirm
          title={t('account.delete')}
          lead={t('account.delete_lead')}
          action={t('account.delete')}
          typed={{ label: t('account.delete_confirm', { email: person.email }), value: person.email }}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/me', { body: { email: person.email } }));
              location.assign('/sign-in');
            } catch (err) {
              toast(err instanceof ApiError && err.code === 'only_owner' ? t('account.only_owner') : t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </>
  );
}

/** The person's own name and panel language; a new language re-renders the panel at once. */
function Profile() {
  const person = me.value!.person;
  const [name, setName] = useState(person.name ?? '');
  const [lang, setLang] = useState<Locale>(pickLocale(person.locale));
  const [undo, setUndo] = useState(person.undo_send_seconds ?? 10);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function save(e: Event) {
    e.preventDefault();
    setFormError(null);
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 100) return setFormError(t('account.name_invalid'));
    setBusy(true);
    try {
      const answer = await must(api.PATCH('/v1/me', { body: { name: trimmed, locale: lang, undo_send_seconds: undo } }));
      me.value = { ...me.value!, person: answer.person };
      setName(answer.person.name ?? '');
      setLocale(answer.person.locale);
      void loadInboxes();
      toast(t('settings.saved'));
    } catch (err) {
      setFormError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="card" onSubmit={save} aria-labelledby="profile-title" noValidate>
      <h2 id="profile-title" style={{ marginTop: 0 }}>
        {t('account.profile')}
      </h2>
      <dl>
        <dt class="muted">{t('account.email')}</dt>
        <dd style={{ margin: 0 }}>{person.email}</dd>
      </dl>
      <div class="field">
        <label for="my-name">{t('account.name')}</label>
        <input
          id="my-name"
          class="input"
          autoComplete="name"
          maxLength={100}
          value={name}
          aria-describedby="my-name-hint"
          aria-invalid={formError ? true : undefined}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <span class="hint" id="my-name-hint">
          {t('account.name_hint')}
        </span>
      </div>
      <div class="field">
        <label for="my-locale">{t('account.locale')}</label>
        <select id="my-locale" class="select" value={lang} onChange={(e) => setLang(e.currentTarget.value as Locale)}>
          <option value="en" lang="en">
            English
          </option>
          <option value="tr" lang="tr">
            Türkçe
          </option>
        </select>
      </div>
      <div class="field">
        <label for="my-undo-send">{t('account.undo_send')}</label>
        <select
          id="my-undo-send"
          class="select"
          value={String(undo)}
          aria-describedby="my-undo-send-hint"
          onChange={(e) => setUndo(Number(e.currentTarget.value))}
        >
          {[0, 5, 10, 20, 30, 60].map((n) => (
            <option key={n} value={String(n)}>
              {n === 0 ? t('account.undo_send_off') : t('account.undo_send_seconds', { count: n })}
            </option>
          ))}
        </select>
        <span class="hint" id="my-undo-send-hint">
          {t('account.undo_send_hint')}
        </span>
      </div>
      <FormError error={formError} />
      <button class="btn btn-primary" type="submit" disabled={busy}>
        {t('settings.save')}
      </button>
    </form>
  );
}
