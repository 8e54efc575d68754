// A migration's user name and (app) password, and the connection test that says which step failed.
// The one form for it: the wizard's Connect step, a migration that needs a new password, and the
// credentials-link page (pages/ConnectMailbox.tsx, which puts the password with the link's token).
// The password field is never filled back in: the server never shows it again.
import { useState } from 'preact/hooks';
import { ApiError, api, errorText, must, type Schemas } from '../api';
import { FormError } from '../components/FormError';
import { t } from '../i18n';

type Migration = Schemas['Migration'];
export type ConnectionTestResult = {
  ok: boolean;
  failed_step: string | null;
  message: string;
  steps: { step: string; status: 'ok' | 'failed' | 'skipped'; detail: string | null }[];
};

export function MigrationPasswordForm(props: {
  migration: Pick<Migration, 'id' | 'username' | 'source_address' | 'credentials'>;
  /**
   * Called after the password was stored (and tested, with `testAfterSave` or a `submit` that
   * tests): with the migration, or null when `submit` does not answer one (the link page).
   */
  onSaved: (migration: Migration | null, test: ConnectionTestResult | null) => void;
  /** Runs the connection test right after saving (the wizard's Connect step). */
  testAfterSave?: boolean;
  submitLabel?: string;
  idPrefix?: string;
  /** The heading; null: none (the page has its own). */
  title?: string | null;
  /** A line under the fields (what happens to the password). */
  hint?: string;
  /**
   * How the user name and password reach the server; default: PUT …/credentials with the member's
   * session. The link page's answers the connection test it ran instead of the migration.
   */
  submit?: (input: { username?: string; password: string }) => Promise<{ migration: Migration | null; test: ConnectionTestResult | null }>;
}) {
  const id = props.idPrefix ?? 'mig';
  const [username, setUsername] = useState(props.migration.username ?? props.migration.source_address ?? '');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<ConnectionTestResult | null>(null);
  const [wait, setWait] = useState<number | null>(null);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setWait(null);
    setResult(null);
    try {
      const input = { username: username.trim() || undefined, password };
      const saved = props.submit
        ? await props.submit(input)
        : {
            migration: await must(api.PUT('/v1/migrations/{migrationId}/credentials', { params: { path: { migrationId: props.migration.id } }, body: input })),
            test: null,
          };
      let migration = saved.migration;
      // The field is emptied at once: the password lives only on the server now, sealed.
      setPassword('');
      let test: ConnectionTestResult | null = saved.test;
      if (test) setResult(test);
      else if (props.testAfterSave) {
        const tested = await runConnectionTest(props.migration.id);
        if ('retryAfter' in tested) setWait(tested.retryAfter);
        else {
          test = tested.result;
          migration = tested.migration;
          setResult(test);
        }
      }
      props.onSaved(migration, test);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class={props.title === null ? undefined : 'card'} onSubmit={submit} aria-labelledby={props.title === null ? undefined : `${id}-pw-title`}>
      {props.title !== null && (
        <h2 id={`${id}-pw-title`} style={{ marginTop: 0 }}>
          {props.title ?? t('mig.pw.title')}
        </h2>
      )}
      {props.migration.credentials.set && <p class="muted">{t('mig.pw.is_set')}</p>}
      <div class="field">
        <label for={`${id}-username`}>{t('mig.pw.username')}</label>
        <input
          id={`${id}-username`}
          class="input"
          autoComplete="username"
          required
          maxLength={320}
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`${id}-password`}>{t('mig.pw.password')}</label>
        <input
          id={`${id}-password`}
          class="input"
          type="password"
          autoComplete="new-password"
          required
          maxLength={1000}
          value={password}
          aria-describedby={`${id}-password-hint`}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <span class="hint" id={`${id}-password-hint`}>
          {props.hint ?? t('mig.pw.hint')}
        </span>
      </div>
      <FormError error={error} />
      {wait !== null && <RateLimited seconds={wait} />}
      {result && <ConnectionTestSteps result={result} />}
      <button class="btn btn-primary" type="submit" disabled={busy}>
        {busy ? t('mig.working') : (props.submitLabel ?? (props.testAfterSave ? t('mig.pw.save_test') : t('mig.pw.save')))}
      </button>
    </form>
  );
}

/** POST …/test: the result of every step, or the wait when too many tests were run. */
export async function runConnectionTest(migrationId: string): Promise<{ result: ConnectionTestResult; migration: Migration } | { retryAfter: number }> {
  const r = await api.POST('/v1/migrations/{migrationId}/test', { params: { path: { migrationId } } });
  if (r.response.status === 429) return { retryAfter: Number(r.response.headers.get('retry-after') ?? '60') };
  if (!r.data) {
    const body = r.error as { error?: { code?: string; message?: string } } | undefined;
    throw new ApiError(r.response.status, body?.error?.code ?? 'error', body?.error?.message ?? r.response.statusText);
  }
  const { migration, ...result } = r.data;
  return { result: result as ConnectionTestResult, migration: migration as Migration };
}

export function RateLimited(props: { seconds: number }) {
  const minutes = Math.ceil(props.seconds / 60);
  return (
    <p class="notice notice-warn" role="alert">
      {t('mig.test.rate_limited', { minutes })}
    </p>
  );
}

const STEP_KEYS = {
  dns: 'mig.test.dns',
  connect: 'mig.test.connect',
  tls: 'mig.test.tls',
  login: 'mig.test.login',
  permission: 'mig.test.permission',
  list: 'mig.test.list',
} as const;

// A help desk is read through its API: its last step lists tickets, not folders.
export function ConnectionTestSteps(props: { result: ConnectionTestResult; helpDesk?: boolean }) {
  const { result } = props;
  const stepKey = (step: string) =>
    props.helpDesk && step === 'list' ? 'mig.test.list_tickets' : (STEP_KEYS[step as keyof typeof STEP_KEYS] ?? 'mig.test.connect');
  return (
    <div class={result.ok ? 'notice' : 'notice notice-warn'} role={result.ok ? 'status' : 'alert'}>
      <p style={{ margin: 0 }}>
        <strong>
          {result.ok ? t(props.helpDesk ? 'mig.test.ok_tickets' : 'mig.test.ok') : t('mig.test.failed', { step: t(stepKey(result.failed_step ?? 'connect')) })}
        </strong>
      </p>
      <ol class="mig-test-steps">
        {result.steps.map((s) => (
          <li key={s.step} data-status={s.status}>
            <strong>{t(`mig.test.status_${s.status}`)}</strong> · {t(stepKey(s.step))}
            {s.detail && <span class="muted"> · {s.detail}</span>}
          </li>
        ))}
      </ol>
    </div>
  );
}
