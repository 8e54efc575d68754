// A help desk's API credentials for a migration (Zendesk: subdomain, agent e-mail, API token;
// Help Scout: App ID and App Secret). The server seals the secret and tests it at once; the answer
// carries the test, shown step by step (which step failed: DNS, TLS, sign-in, permission). The
// secret fields are never filled back in: the server never shows them again.
import { useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { FormError } from '../components/FormError';
import { t } from '../i18n';
import { type ConnectionTestResult, ConnectionTestSteps } from './MigrationPasswordForm';

type Migration = Schemas['Migration'];
export type HelpDeskCredentialsBody = { subdomain: string; email: string; api_token: string } | { app_id: string; app_secret: string };

export function HelpDeskCredentialsForm(props: {
  migration: Pick<Migration, 'id' | 'provider' | 'username' | 'credentials'>;
  onSaved: (migration: Migration | null, test: ConnectionTestResult | null) => void;
  /** Where the credentials go; by default PUT /v1/migrations/{id}/credentials (a credentials link's page puts them with its token). */
  submit?: (body: HelpDeskCredentialsBody) => Promise<{ migration: Migration | null; test: ConnectionTestResult | null }>;
}) {
  const zendesk = props.migration.provider === 'zendesk';
  const [subdomain, setSubdomain] = useState('');
  const [email, setEmail] = useState(zendesk ? (props.migration.username ?? '') : '');
  const [secret, setSecret] = useState('');
  const [appId, setAppId] = useState(zendesk ? '' : (props.migration.username ?? ''));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<ConnectionTestResult | null>(null);

  async function putCredentials(body: HelpDeskCredentialsBody) {
    const answer = await must(api.PUT('/v1/migrations/{migrationId}/credentials', { params: { path: { migrationId: props.migration.id } }, body }));
    const { test, ...migration } = answer as Migration & { test?: ConnectionTestResult };
    return { migration: migration as Migration, test: test ?? null };
  }

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const body: HelpDeskCredentialsBody = zendesk
        ? { subdomain: subdomain.trim(), email: email.trim(), api_token: secret }
        : { app_id: appId.trim(), app_secret: secret };
      const { migration, test } = await (props.submit ?? putCredentials)(body);
      setSecret('');
      if (test) setResult(test);
      props.onSaved(migration, test);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  const field = (id: string, label: string, value: string, set: (v: string) => void, opts: { secret?: boolean; hint?: string; placeholder?: string } = {}) => (
    <div class="field">
      <label for={id}>{label}</label>
      {opts.secret ? (
        <input
          id={id}
          class="input"
          type="password"
          autoComplete="new-password"
          required
          maxLength={200}
          value={value}
          aria-describedby={opts.hint ? `${id}-hint` : undefined}
          onInput={(e) => set(e.currentTarget.value)}
        />
      ) : (
        <input
          id={id}
          class="input mono"
          type="text"
          autoComplete="off"
          required
          maxLength={200}
          placeholder={opts.placeholder}
          value={value}
          aria-describedby={opts.hint ? `${id}-hint` : undefined}
          onInput={(e) => set(e.currentTarget.value)}
        />
      )}
      {opts.hint && (
        <span class="hint" id={`${id}-hint`}>
          {opts.hint}
        </span>
      )}
    </div>
  );

  return (
    <form class="card" onSubmit={submit} aria-labelledby="mig-hd-title" data-testid="help-desk-credentials">
      <h2 id="mig-hd-title" style={{ marginTop: 0 }}>
        {t(zendesk ? 'mig.hd.zendesk_title' : 'mig.hd.helpscout_title')}
      </h2>
      <p class="muted">{t(zendesk ? 'mig.hd.zendesk_lead' : 'mig.hd.helpscout_lead')}</p>
      {props.migration.credentials.set && <p class="muted">{t('mig.hd.is_set')}</p>}
      {zendesk ? (
        <>
          {field('mig-hd-subdomain', t('mig.hd.subdomain'), subdomain, setSubdomain, { hint: t('mig.hd.subdomain_hint'), placeholder: 'acme' })}
          {field('mig-hd-email', t('mig.hd.email'), email, setEmail, { placeholder: 'agent@example.com' })}
          {field('mig-hd-token', t('mig.hd.api_token'), secret, setSecret, { secret: true, hint: t('mig.hd.api_token_hint') })}
        </>
      ) : (
        <>
          {field('mig-hd-app-id', t('mig.hd.app_id'), appId, setAppId)}
          {field('mig-hd-app-secret', t('mig.hd.app_secret'), secret, setSecret, { secret: true, hint: t('mig.hd.app_secret_hint') })}
        </>
      )}
      <FormError error={error} />
      {result && <ConnectionTestSteps result={result} helpDesk />}
      <button class="btn btn-primary" type="submit" disabled={busy}>
        {busy ? t('mig.working') : t('mig.pw.save_test')}
      </button>
    </form>
  );
}
