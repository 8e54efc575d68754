// The page of a credentials link (/migrations/<id>/connect#token=…): the person whose mailbox is
// moved types its password here, so an assistant or script never handles it. It works signed out —
// the token is the authority — and names the mailbox it is for. The token stays after '#', so it
// never reaches a server log or a Referer header; it is sent only in request bodies.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../api';
import { t } from '../i18n';

type LinkInfo = { mailbox: string | null; username: string | null; provider_name: string; app_password: string; app_password_url: string | null };
type Outcome = { connected: boolean; test: { failed_step: string | null; message: string } | null };

const tokenFromHash = () => new URLSearchParams(location.hash.replace(/^#/, '')).get('token') ?? '';

export function ConnectMailbox({ id }: { id?: string }) {
  const migrationId = id ?? '';
  const [token] = useState(tokenFromHash);
  const [info, setInfo] = useState<LinkInfo | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  useEffect(() => {
    if (!token) return setProblem(t('connect.link_gone'));
    must(api.POST('/v1/migration-links/{migrationId}/check', { params: { path: { migrationId } }, body: { token } }))
      .then((r) => {
        setInfo(r);
        setUsername(r.username ?? r.mailbox ?? '');
      })
      .catch(() => setProblem(t('connect.link_gone')));
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setFailed(null);
    try {
      const r: Outcome = await must(
        api.PUT('/v1/migration-links/{migrationId}/credentials', {
          params: { path: { migrationId } },
          body: { token, username: username.trim() || undefined, password },
        }),
      );
      if (r.connected) {
        setDone(true);
        setPassword('');
      } else setFailed(t('connect.failed', { message: r.test?.message ?? '' }));
    } catch (err) {
      setFailed(t('common.error', { error: errorText(err) }));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="auth">
      <div class="auth-card">
        <p class="brand" aria-hidden="true">
          {t('app.name')}
        </p>
        <h1>{info?.mailbox ? t('connect.title_for', { mailbox: info.mailbox }) : t('connect.title')}</h1>
        {problem ? (
          <p class="error-text" role="alert">
            {problem}
          </p>
        ) : !info ? (
          <p aria-busy="true">{t('connect.checking')}</p>
        ) : done ? (
          <p role="status">{t('connect.done')}</p>
        ) : (
          <form onSubmit={submit}>
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
            <div class="field">
              <label for="connect-username">{t('connect.username')}</label>
              <input
                id="connect-username"
                class="input"
                autoComplete="username"
                maxLength={320}
                value={username}
                onInput={(e) => setUsername(e.currentTarget.value)}
              />
            </div>
            <div class="field">
              <label for="connect-password">{t('connect.password')}</label>
              <input
                id="connect-password"
                class="input"
                type="password"
                autoComplete="off"
                required
                maxLength={1000}
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </div>
            <p class="muted">{t('connect.sealed')}</p>
            {failed && (
              <p class="error-text" role="alert">
                {failed}
              </p>
            )}
            <button class="btn btn-primary" type="submit" disabled={busy || !password}>
              {busy ? t('connect.testing') : t('connect.submit')}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
