// Step 2, Connect: the old mailbox's password, an OAuth sign-in, a help desk's key or an upload.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { errorText } from '../../api';
import { useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { toast } from '../../state';
import { HelpDeskCredentialsForm } from '../HelpDeskCredentialsForm';
import { type ConnectionTestResult, ConnectionTestSteps, MigrationPasswordForm, RateLimited, runConnectionTest } from '../MigrationPasswordForm';
import { MigrationSignIn, SignInOutcome } from '../MigrationSignIn';
import { MigrationUpload } from '../MigrationUpload';
import { loadPresets, type Migration, presetText, useSourceText } from '../model';

export function ConnectStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const { route, query } = useLocation();
  // Once connected the wizard would move on to Choose: stay here to show the test's result first.
  const changed = (next: Migration) => {
    if (next.state !== 'draft' && query.step !== 'connect') route(`/settings/migrations/${m.id}?step=connect`, true);
    props.onChanged(next);
  };
  const st = useSourceText();
  const presets = useLoad(loadPresets);
  const preset = presets.data?.find((p) => p.id === m.provider);
  const [result, setResult] = useState<ConnectionTestResult | null>(null);
  const [wait, setWait] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  // Back from the provider's sign-in: test the connection once, at once.
  const signedIn = typeof query.signed_in === 'string' ? query.signed_in : undefined;
  const signInError = typeof query.sign_in_error === 'string' ? query.sign_in_error : undefined;
  const [testedAfterSignIn, setTestedAfterSignIn] = useState(false);
  useEffect(() => {
    if (signedIn && !testedAfterSignIn && m.allowed_actions.includes('test')) {
      setTestedAfterSignIn(true);
      void test();
    }
  }, [signedIn, m.allowed_actions.includes('test')]);
  if (m.allowed_actions.includes('upload') || (preset?.kind === 'export_file' && m.state === 'draft')) {
    return <MigrationUpload migrationId={m.id} onConnected={props.onChanged} />;
  }
  if (preset?.kind === 'export_file') return <p class="notice">{t('mig.upload.already')}</p>;
  async function test() {
    setBusy(true);
    setWait(null);
    try {
      const r = await runConnectionTest(m.id);
      if ('retryAfter' in r) setWait(r.retryAfter);
      else {
        setResult(r.result);
        changed(r.migration);
      }
    } catch (err) {
      toast(t('action.failed', { error: errorText(err) }));
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <section class="card" aria-labelledby="mig-how">
        <h2 id="mig-how" style={{ marginTop: 0 }}>
          {st('mig.connect.title')}
        </h2>
        {m.imap && (
          <p>
            {t('mig.connect.server')} <span class="mono">{`${m.imap.host}:${m.imap.port}`}</span> ·{' '}
            {m.imap.tls === 'none' ? t('mig.connect.no_tls') : m.imap.tls.toUpperCase()}
          </p>
        )}
        {preset && preset.app_password !== 'no' && (
          <p>{t(preset.app_password === 'required' ? 'mig.connect.app_password_required' : 'mig.connect.app_password_two_step')}</p>
        )}
        {preset?.note && <p class="muted">{presetText(preset, 'note')}</p>}
        {preset?.app_password_url && preset.kind !== 'sign_in' && (
          <p>
            <a href={preset.app_password_url} target="_blank" rel="noopener noreferrer">
              {t('mig.connect.make_app_password')}
            </a>
          </p>
        )}
      </section>
      {preset?.kind === 'sign_in' && <SignInOutcome signedIn={signedIn} error={signInError} provider={m.provider} />}
      {m.allowed_actions.includes('credentials') &&
        (preset?.kind === 'sign_in' ? (
          <MigrationSignIn migration={m} preset={preset} />
        ) : preset?.kind === 'help_desk' ? (
          <HelpDeskCredentialsForm migration={m} onSaved={(next) => (setResult(null), next && changed(next))} />
        ) : (
          preset && <MigrationPasswordForm migration={m} testAfterSave onSaved={(next) => (setResult(null), next && changed(next))} />
        ))}
      {m.allowed_actions.includes('test') && (
        <p>
          <button class="btn" type="button" disabled={busy} onClick={() => void test()}>
            {busy ? t('mig.working') : t('mig.connect.test_again')}
          </button>
        </p>
      )}
      {wait !== null && <RateLimited seconds={wait} />}
      {result && <ConnectionTestSteps result={result} helpDesk={preset?.kind === 'help_desk'} />}
      {m.state !== 'draft' && (
        <p>
          <a class="btn btn-primary mig-link-btn" href={`/settings/migrations/${m.id}?step=choose`}>
            {st('mig.next.choose')}
          </a>
        </p>
      )}
    </>
  );
}
