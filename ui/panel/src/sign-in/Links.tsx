// Pages opened from links: a one-time sign-in link (/sign-in/link#token) and an invite (/invite#token).
// Tokens sit after '#', so they never reach server logs or Referer headers.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, errorText, must } from '../api';
import { AuthCard } from '../components/AuthCard';
import { FormError } from '../components/FormError';
import { t } from '../i18n';
import { loadMe, me, selectWorkspace } from '../state';

const tokenFromHash = () => decodeURIComponent(location.hash.replace(/^#/, ''));

export function SignInLink() {
  const [error, setError] = useState<string | null>(null);
  const { route } = useLocation();
  useEffect(() => {
    const token = tokenFromHash();
    history.replaceState(null, '', location.pathname);
    if (!token) return setError(t('signin.link_failed'));
    must(api.POST('/v1/auth/link', { body: { token } }))
      .then(() => loadMe())
      .then(() => route('/conversations', true))
      .catch(() => setError(t('signin.link_failed')));
  }, []);
  return (
    <AuthCard title={t('signin.link_title')}>
      {error ? (
        <p class="error-text" role="alert">
          {error} <a href="/sign-in">{t('signin.title')}</a>
        </p>
      ) : (
        <p aria-busy="true">{t('signin.link_working')}</p>
      )}
    </AuthCard>
  );
}

export function AcceptInvite() {
  const [token] = useState(tokenFromHash);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(token ? null : t('invite.missing'));
  const [needsSignIn, setNeedsSignIn] = useState(false);
  const { route } = useLocation();
  async function accept(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const r = await must(api.POST('/v1/invites/accept', { body: { token, ...(name.trim() ? { name: name.trim() } : {}) } }));
      selectWorkspace(r.workspace_id);
      await loadMe();
      route('/conversations', true);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'sign_in_required') setNeedsSignIn(true);
      else setError(t('invite.failed', { error: errorText(err) }));
    }
  }
  return (
    <AuthCard title={t('invite.accept')}>
      <p>{t('invite.lead')}</p>
      {needsSignIn ? (
        <p role="alert">
          {t('invite.sign_in_first')} <a href={`/sign-in?next=${encodeURIComponent(`/invite#${token}`)}`}>{t('signin.title')}</a>
        </p>
      ) : (
        <form onSubmit={accept}>
          {!me.value && (
            <div class="field">
              <label for="invite-name">{t('invite.name')}</label>
              <input id="invite-name" class="input" autoComplete="name" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </div>
          )}
          <FormError error={error} />
          <button class="btn btn-primary" type="submit" disabled={!token}>
            {t('invite.accept')}
          </button>
        </form>
      )}
    </AuthCard>
  );
}
