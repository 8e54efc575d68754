// The page of a credentials link (/migrations/<id>/connect#token=…): the person whose mailbox is
// moved types its password here (in the same form as the wizard's; a help desk's API credentials in
// the wizard's help-desk form), so an assistant or script never handles it. It works signed out —
// the token is the authority — and names the mailbox it is for. The token stays after '#', so it
// never reaches a server log or a Referer header; it is sent only in request bodies. A Google or
// Microsoft mailbox is connected with the provider's sign-in, started here with the token; the
// provider's callback brings the browser back here with ?signed_in= (or ?sign_in_error=).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../api';
import { AuthCard } from '../components/AuthCard';
import { FormError } from '../components/FormError';
import { t } from '../i18n';
import { type HelpDeskCredentialsBody, HelpDeskCredentialsForm } from './HelpDeskCredentialsForm';
import { type ConnectionTestResult, MigrationPasswordForm } from './MigrationPasswordForm';
import { providerLabel } from './MigrationSignIn';

type LinkInfo = {
  provider: string;
  kind: 'mailbox' | 'help_desk' | 'sign_in';
  mailbox: string | null;
  username: string | null;
  provider_name: string;
  app_password: string;
  app_password_url: string | null;
};
type Outcome = { connected: boolean; test: ConnectionTestResult | null };

const tokenFromHash = () => new URLSearchParams(location.hash.replace(/^#/, '')).get('token') ?? '';

/** Back from the provider's sign-in: what the callback said. */
function SignInReturn(props: { query: URLSearchParams }) {
  const error = props.query.get('sign_in_error');
  if (error)
    return (
      <p class="error-text" role="alert">
        {t('connect.sign_in_failed', { error })}
      </p>
    );
  const provider = providerLabel(props.query.get('signed_in') ?? '');
  return (
    <>
      <p role="status">{t('mig.signin.signed_in', { provider })}</p>
      <p role="status">{props.query.get('connected') === '1' ? t('connect.done') : t('connect.signed_in_not_connected')}</p>
    </>
  );
}

function LinkSignIn(props: { migrationId: string; token: string; info: LinkInfo }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const google = props.info.provider === 'google';
  async function start() {
    setBusy(true);
    setError(null);
    try {
      const r = await must(
        api.POST('/v1/migration-links/{migrationId}/sign-in', { params: { path: { migrationId: props.migrationId } }, body: { token: props.token } }),
      );
      location.assign(r.url);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }
  return (
    <>
      <p>{t('connect.lead_sign_in', { provider: providerLabel(props.info.provider) })}</p>
      <p class="muted">{t(google ? 'mig.signin.google_scope' : 'mig.signin.microsoft_scope')}</p>
      <FormError error={error} />
      <button class="btn btn-primary" type="button" disabled={busy} onClick={() => void start()}>
        {busy ? t('mig.working') : t(google ? 'mig.signin.button_google' : 'mig.signin.button_microsoft')}
      </button>
    </>
  );
}

export function ConnectMailbox({ id }: { id?: string }) {
  const migrationId = id ?? '';
  const [token] = useState(tokenFromHash);
  const [query] = useState(() => new URLSearchParams(location.search));
  const returned = query.has('signed_in') || query.has('sign_in_error');
  const [info, setInfo] = useState<LinkInfo | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  useEffect(() => {
    if (returned) return;
    if (!token) return setProblem(t('connect.link_gone'));
    must(api.POST('/v1/migration-links/{migrationId}/check', { params: { path: { migrationId } }, body: { token } }))
      .then(setInfo)
      .catch(() => setProblem(t('connect.link_gone')));
  }, []);

  async function submit(input: { username?: string; password: string } | HelpDeskCredentialsBody) {
    const r: Outcome = await must(api.PUT('/v1/migration-links/{migrationId}/credentials', { params: { path: { migrationId } }, body: { token, ...input } }));
    return { migration: null, test: r.test };
  }

  return (
    <AuthCard title={info?.mailbox ? t('connect.title_for', { mailbox: info.mailbox }) : t('connect.title')}>
      {returned ? (
        <SignInReturn query={query} />
      ) : problem ? (
        <p class="error-text" role="alert">
          {problem}
        </p>
      ) : !info ? (
        <p aria-busy="true">{t('connect.checking')}</p>
      ) : done ? (
        <p role="status">{t('connect.done')}</p>
      ) : info.kind === 'sign_in' ? (
        <LinkSignIn migrationId={migrationId} token={token} info={info} />
      ) : info.kind === 'help_desk' ? (
        <>
          <p>{t('connect.lead_help_desk', { provider: info.provider_name })}</p>
          <HelpDeskCredentialsForm
            migration={{ id: migrationId, provider: info.provider, username: info.username, credentials: { set: false, set_at: null } }}
            submit={submit}
            onSaved={(_migration, test) => setDone(test === null || test.ok)}
          />
        </>
      ) : (
        <>
          <p>{t('connect.lead', { provider: info.provider_name })}</p>
          {info.app_password !== 'no' && (
            <p>
              {t('connect.app_password')}{' '}
              {info.app_password_url && (
                <a href={info.app_password_url} target="_blank" rel="noopener noreferrer">
                  {t('connect.app_password_link')}
                </a>
              )}
            </p>
          )}
          <MigrationPasswordForm
            migration={{ id: migrationId, username: info.username, source_address: info.mailbox, credentials: { set: false, set_at: null } }}
            idPrefix="connect"
            title={null}
            hint={t('connect.sealed')}
            submitLabel={t('connect.submit')}
            submit={submit}
            onSaved={(_migration, test) => setDone(test === null || test.ok)}
          />
        </>
      )}
    </AuthCard>
  );
}
