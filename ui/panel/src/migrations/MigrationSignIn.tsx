// Connecting a mailbox of a sign-in provider (Google, Microsoft): the button starts the sign-in
// (PUT …/credentials answers the provider's page) and sends the browser there; the provider comes
// back to the server's callback, which returns to the wizard with ?signed_in= or ?sign_in_error=.
// When the operator has not set the provider's OAuth client, it says what must be set instead.
import { useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { FormError } from '../components/FormError';
import { t } from '../i18n';

type Migration = Schemas['Migration'];
export type SignInPreset = { id: string; configured?: boolean; operator_settings?: string[] };

export const providerLabel = (id: string) => (id === 'google' ? 'Google' : 'Microsoft');

export function SignInNotConfigured(props: { preset: SignInPreset }) {
  const settings = (props.preset.operator_settings ?? []).filter((s) => !s.endsWith('_TENANT'));
  return (
    <p class="notice notice-warn" role="note" data-testid="sign-in-not-configured">
      {t('mig.signin.not_configured', { provider: providerLabel(props.preset.id), settings: settings.join(', ') })}
    </p>
  );
}

export function MigrationSignIn(props: { migration: Pick<Migration, 'id' | 'credentials'>; preset: SignInPreset }) {
  const { preset } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (preset.configured === false) return <SignInNotConfigured preset={preset} />;
  async function start() {
    setBusy(true);
    setError(null);
    try {
      const r = (await must(
        api.PUT('/v1/migrations/{migrationId}/credentials', { params: { path: { migrationId: props.migration.id } }, body: {} }),
      )) as Migration & { sign_in?: { url: string } };
      if (!r.sign_in) throw new Error('no sign-in address');
      location.assign(r.sign_in.url);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }
  return (
    <div class="card">
      <h2 style={{ marginTop: 0 }}>{t('mig.signin.title')}</h2>
      <p>{t('mig.signin.lead', { provider: providerLabel(preset.id) })}</p>
      <p class="muted">{t(preset.id === 'google' ? 'mig.signin.google_scope' : 'mig.signin.microsoft_scope')}</p>
      {props.migration.credentials.set && <p class="muted">{t('mig.signin.is_set')}</p>}
      <FormError error={error} />
      <button class="btn btn-primary" type="button" disabled={busy} onClick={() => void start()}>
        {busy ? t('mig.working') : t(preset.id === 'google' ? 'mig.signin.button_google' : 'mig.signin.button_microsoft')}
      </button>
    </div>
  );
}

/** What the callback said (?signed_in= / ?sign_in_error=), for the Connect step. */
export function SignInOutcome(props: { signedIn?: string; error?: string; provider: string }) {
  if (props.signedIn)
    return (
      <p class="notice" role="status">
        {t('mig.signin.signed_in', { provider: providerLabel(props.provider) })}
      </p>
    );
  if (!props.error) return null;
  return (
    <p class="notice notice-warn" role="alert">
      {props.error === 'access_denied' ? t('mig.signin.declined', { provider: providerLabel(props.provider) }) : t('mig.signin.failed', { error: props.error })}
    </p>
  );
}
