// Sign in with a mailed one-time code. (Passkeys and sign-in links join here as the API offers them.)
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../api';
import { AuthCard } from '../components/AuthCard';
import { FormError } from '../components/FormError';
import { t } from '../i18n';
import { passkeysSupported, signInWithPasskey } from '../passkeys';
import { loadMe } from '../state';

export function SignIn() {
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [step, setStep] = useState<'email' | 'code'>('email');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [codesMailed, setCodesMailed] = useState(true);
  useEffect(() => {
    void api.GET('/v1/auth/methods').then((r) => r.data && setCodesMailed(r.data.email_code));
  }, []);

  async function sendCode(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await must(api.POST('/v1/auth/code', { body: { email } }));
      setNotice(t('signin.code_sent', { email }));
      setStep('code');
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  async function passkey() {
    setBusy(true);
    setError(null);
    try {
      await signInWithPasskey(email.trim() || undefined);
      await loadMe();
    } catch (err) {
      setError(err instanceof DOMException && err.name === 'NotAllowedError' ? t('signin.passkey_cancelled') : errorText(err));
      setBusy(false);
    }
  }

  async function verify(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await must(api.POST('/v1/auth/verify', { body: { email, code: code.trim() } }));
      await loadMe();
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }

  return (
    <AuthCard title={t('signin.title')}>
      {!codesMailed && (
        <div class="notice notice-warn" role="status">
          {t('signin.no_mail')}
        </div>
      )}
      {step === 'email' ? (
        <form onSubmit={sendCode}>
          {codesMailed && <p>{t('signin.lead')}</p>}
          <div class="field">
            <label for="email">{t('signin.email')}</label>
            <input
              id="email"
              class="input"
              type="email"
              autoComplete="username webauthn"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </div>
          <FormError error={error} />
          {codesMailed && (
            <button class="btn btn-primary" type="submit" disabled={busy}>
              {t('signin.send')}
            </button>
          )}
          {passkeysSupported() && (
            <>
              <div class="auth-divider">{t('signin.or')}</div>
              <button class="btn" type="button" disabled={busy} onClick={() => void passkey()}>
                {t('signin.passkey')}
              </button>
            </>
          )}
        </form>
      ) : (
        <form onSubmit={verify}>
          {notice && (
            <div class="notice" role="status">
              {notice}
            </div>
          )}
          <div class="field">
            <label for="code">{t('signin.code')}</label>
            <input
              id="code"
              class="input"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              autoFocus
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </div>
          <FormError error={error} />
          <button class="btn btn-primary" type="submit" disabled={busy}>
            {t('signin.verify')}
          </button>
          <p>
            <button class="btn btn-ghost" type="button" onClick={() => (setStep('email'), setCode(''), setError(null))}>
              {t('signin.other_address')}
            </button>
          </p>
        </form>
      )}
    </AuthCard>
  );
}
