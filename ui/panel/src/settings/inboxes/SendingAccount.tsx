// How an e-mail channel's replies go out: an SMTP server with a password (the fields in
// Channels.tsx), or the team's Google or Microsoft account through a sign-in. Choosing a provider
// and pressing its button saves smtp_auth and opens the provider's sign-in page (the server's
// answer names it); the provider returns to this page with ?channel=…&signed_in= or &sign_in_error=.
import { useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../../api';
import { FormError } from '../../components/FormError';
import { t } from '../../i18n';

type Channel = Schemas['Channel'];
export type SmtpAuth = 'password' | 'google' | 'microsoft';

const providerLabel = (p: string) => (p === 'google' ? 'Google' : 'Microsoft');

export function SendingChoice(props: { id: string; mode: SmtpAuth; onChange: (m: SmtpAuth) => void }) {
  const options: [SmtpAuth, string][] = [
    ['password', t('channels.auth_password')],
    ['google', t('channels.auth_google')],
    ['microsoft', t('channels.auth_microsoft')],
  ];
  return (
    <fieldset class="field auto-plain">
      <legend style={{ fontWeight: 600 }}>{t('channels.auth_title')}</legend>
      <div class="checks">
        {options.map(([value, label]) => (
          <label key={value}>
            <input type="radio" name={`smtp-auth-${props.id}`} value={value} checked={props.mode === value} onChange={() => props.onChange(value)} />
            {label}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** What the provider's return said, when it is about this channel. */
function returnedOutcome(channelId: string): { signedIn?: string; error?: string } {
  const q = new URLSearchParams(location.search);
  if (q.get('channel') !== channelId) return {};
  return { signedIn: q.get('signed_in') ?? undefined, error: q.get('sign_in_error') ?? undefined };
}

export function SignInAccount(props: { channel: Channel; provider: 'google' | 'microsoft'; onChanged: () => void }) {
  const c = props.channel;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [outcome] = useState(() => returnedOutcome(c.id));
  const provider = providerLabel(props.provider);
  const grant = c.smtp_auth === props.provider && c.signed_in?.provider === props.provider ? c.signed_in : null;
  async function start() {
    setBusy(true);
    setError(null);
    try {
      const r = (await must(api.PATCH('/v1/channels/{channelId}', { params: { path: { channelId: c.id } }, body: { smtp_auth: props.provider } }))) as Channel;
      if (r.sign_in) {
        location.assign(r.sign_in.url);
        return;
      }
      setBusy(false);
      props.onChanged();
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }
  const button = (label: string, primary: boolean) => (
    <button class={primary ? 'btn btn-primary' : 'btn'} type="button" disabled={busy} onClick={() => void start()}>
      {busy ? t('channels.signing_in') : label}
    </button>
  );
  return (
    <div class="field" data-testid="sending-account">
      {outcome.signedIn && grant?.state === 'ok' && (
        <p class="notice" role="status">
          {t('channels.signed_in_now', { provider })}
        </p>
      )}
      {outcome.error && (
        <p class="notice notice-warn" role="alert">
          {outcome.error === 'access_denied' ? t('channels.sign_in_declined', { provider }) : t('channels.sign_in_failed', { error: outcome.error })}
        </p>
      )}
      {grant?.state === 'ok' ? (
        <>
          <p class="pill-ok" style={{ margin: 0 }}>
            {t('channels.connected_as', { provider, account: grant.account })}
          </p>
          <span class="hint">{t('channels.auth_hint', { provider })}</span>
          <div>{button(t('channels.sign_in_other'), false)}</div>
        </>
      ) : grant?.state === 'revoked' ? (
        <>
          <p class="notice notice-warn" role="alert">
            {t('channels.sign_in_again_lead', { provider, account: grant.account, error: grant.error ?? '' })}
          </p>
          <div>{button(t(props.provider === 'google' ? 'channels.sign_in_again_google' : 'channels.sign_in_again_microsoft'), true)}</div>
        </>
      ) : (
        <>
          <span class="hint">{t('channels.auth_hint', { provider })}</span>
          <div>{button(t(props.provider === 'google' ? 'channels.sign_in_google' : 'channels.sign_in_microsoft'), true)}</div>
        </>
      )}
      <FormError error={error} />
    </div>
  );
}
