// Pages opened from links: a one-time sign-in link (/sign-in/link#token) and an invite (/invite#token).
// Tokens sit after '#', so they never reach server logs or Referer headers.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, api, errorText, must } from '../api';
import { AuthCard } from '../components/AuthCard';
import { FormError } from '../components/FormError';
import { locale, t } from '../i18n';
import { loadMe, me, selectWorkspace } from '../state';

const tokenFromHash = () => decodeURIComponent(location.hash.replace(/^#/, ''));

/**
 * A link names its account and signs in only when the person says so: a page elsewhere can open
 * this URL with someone else's link (login CSRF), and a browser signed in to another account is
 * never switched without a choice.
 */
export function SignInLink() {
  const [token] = useState(tokenFromHash);
  const [account, setAccount] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(token ? null : t('signin.link_failed'));
  const [busy, setBusy] = useState(false);
  const { route } = useLocation();
  const current = me.value?.person.email ?? null;
  useEffect(() => {
    history.replaceState(null, '', location.pathname);
    if (!token) return;
    must(api.POST('/v1/auth/link/account', { body: { token } }))
      .then((r) => setAccount(r.email))
      .catch(() => setError(t('signin.link_failed')));
  }, []);
  async function signIn() {
    setBusy(true);
    try {
      await must(api.POST('/v1/auth/link', { body: { token, ...(current ? { switch_account: true } : {}) } }));
      await loadMe();
      route('/conversations', true);
    } catch {
      setError(t('signin.link_failed'));
      setBusy(false);
    }
  }
  const same = account !== null && current !== null && account.toLowerCase() === current.toLowerCase();
  return (
    <AuthCard title={t('signin.link_title')}>
      {error ? (
        <p class="error-text" role="alert">
          {error} <a href="/sign-in">{t('signin.title')}</a>
        </p>
      ) : account === null ? (
        <p aria-busy="true">{t('signin.link_checking')}</p>
      ) : same ? (
        <>
          <p>{t('signin.link_already', { email: account })}</p>
          <a class="btn btn-primary" href="/conversations">
            {t('signin.link_continue')}
          </a>
        </>
      ) : (
        <>
          <p>{current ? t('signin.link_switch_lead', { current, email: account }) : t('signin.link_ask', { email: account })}</p>
          <p class="muted">{t('signin.link_warning')}</p>
          <div class="row-actions">
            <button class="btn btn-primary" type="button" disabled={busy} onClick={() => void signIn()}>
              {current ? t('signin.link_switch', { email: account }) : t('signin.link_sign_in', { email: account })}
            </button>
            <a class="btn" href={current ? '/conversations' : '/sign-in'}>
              {current ? t('signin.link_stay', { email: current }) : t('signin.link_cancel')}
            </a>
          </div>
        </>
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
  const [offer, setOffer] = useState<{ workspace_name: string; role: string; email: string } | null>(null);
  useEffect(() => {
    if (!token) return;
    must(api.POST('/v1/invites/preview', { body: { token } })).then(setOffer, (err) => setError(t('invite.failed', { error: errorText(err) })));
  }, [token]);
  async function accept(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const r = await must(api.POST('/v1/invites/accept', { body: { token, locale: locale.value, ...(name.trim() ? { name: name.trim() } : {}) } }));
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
      <p>
        {offer ? t('invite.offer', { workspace: offer.workspace_name, role: t(`role.${offer.role}` as 'role.agent'), email: offer.email }) : t('invite.lead')}
      </p>
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
