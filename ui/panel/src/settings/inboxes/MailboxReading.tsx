// "Read this mailbox" on an e-mail channel: the IMAP account the channel reads live (checked by the
// server before it is saved) or the channel's Google/Microsoft sign-in (the answer names the
// provider's page to open when the channel is not signed in with it), and the reader's state: connecting, connected with IDLE or polling,
// or what failed (the step and the server's words) and when it tries again.
import { useEffect, useState } from 'preact/hooks';
import { api, type BodyOf, errorText, must, type Schemas } from '../../api';
import { FormError } from '../../components/FormError';
import { absoluteTime, relativeTime, t } from '../../i18n';
import { toast } from '../../state';

type Channel = Schemas['Channel'];

type ReadingInput = NonNullable<BodyOf<'/v1/channels/{channelId}', 'patch'>['reading']>;
type Tls = 'tls' | 'starttls' | 'none';
type Kind = 'imap' | 'google' | 'microsoft';
const STEPS = ['dns', 'connect', 'tls', 'login', 'permission', 'list', 'read'] as const;

/** The failed step in the member's language (the server's words stay as they are). */
function stepName(step: string | undefined): string {
  const known = STEPS.find((s) => s === step);
  return known ? t(`reading.step_${known}`) : (step ?? '');
}

function ReaderState(props: { channel: Channel }) {
  const r = props.channel.reader;
  if (!r) return null;
  // Reading through a refused sign-in: waiting helps nothing, only a new sign-in does.
  const signInRefused = props.channel.reading?.kind !== 'imap' && props.channel.signed_in?.state === 'revoked';
  const line =
    r.state === 'connecting'
      ? t('reading.state_connecting')
      : r.state === 'idle'
        ? t('reading.state_idle')
        : r.state === 'polling'
          ? t('reading.state_polling')
          : t('reading.state_attention', { step: stepName(r.error?.step), message: r.error?.message ?? '' });
  return (
    <div role="status" aria-live="polite">
      <p class={r.state === 'needs_attention' ? 'pill-bad' : r.state === 'connecting' ? undefined : 'pill-ok'}>{line}</p>
      {r.state === 'needs_attention' &&
        (signInRefused ? (
          <p class="hint">{t('reading.waits_for_sign_in')}</p>
        ) : (
          r.retry_at && <p class="hint">{t('reading.retry', { time: absoluteTime(r.retry_at) })}</p>
        ))}
      <p class="hint">
        {r.last_read_at ? (
          <span title={absoluteTime(r.last_read_at)}>{t('reading.last_read', { time: relativeTime(r.last_read_at) })}</span>
        ) : (
          t('reading.none_yet')
        )}
      </p>
    </div>
  );
}

export function MailboxReading(props: { channel: Channel; onChanged: () => void }) {
  const c = props.channel;
  const id = c.id;
  const current = c.reading;
  const [kind, setKind] = useState<Kind>((current?.kind as Kind) ?? 'imap');
  const [host, setHost] = useState(current?.host ?? '');
  const [port, setPort] = useState(current?.port ?? 993);
  const [tls, setTls] = useState<Tls>((current?.tls as Tls) ?? 'tls');
  const [username, setUsername] = useState(current?.username ?? c.address ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A link to this card (#reading-<channel>, from a completed migration): shown and focused once rendered.
  useEffect(() => {
    if (location.hash !== `#reading-${id}`) return;
    const card = document.getElementById(`reading-${id}`);
    card?.scrollIntoView({ block: 'start' });
    card?.focus({ preventScroll: true });
  }, [id]);
  // While the reader connects, look again every 2 s until it has (its state changes in the
  // background; a connection can take longer than one look, e.g. right after a sign-in).
  useEffect(() => {
    if (c.reader?.state !== 'connecting') return;
    const timer = setInterval(props.onChanged, 2000);
    return () => clearInterval(timer);
  }, [c.reader?.state, c.updated_at]);

  async function send(reading: ReadingInput | null) {
    setBusy(true);
    setError(null);
    try {
      const answer = await must(api.PATCH('/v1/channels/{channelId}', { params: { path: { channelId: id } }, body: { reading } }));
      if (answer.sign_in) {
        location.assign(answer.sign_in.url);
        return;
      }
      setPassword('');
      toast(reading ? t('reading.saved') : t('reading.stopped'));
      props.onChanged();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  function save(e: Event) {
    e.preventDefault();
    if (kind !== 'imap') void send({ kind });
    else void send({ kind: 'imap', host: host.trim(), port, tls, username: username.trim(), ...(password ? { password } : {}) });
  }
  const kinds: [Kind, string][] = [
    ['imap', t('reading.kind_imap')],
    ['google', t('channels.auth_google')],
    ['microsoft', t('channels.auth_microsoft')],
  ];
  const provider = kind === 'google' ? 'Google' : 'Microsoft';
  // The channel's sign-in with the chosen provider: reading through it needs no button while it
  // works; a refused one asks to sign in again.
  const grant = kind !== 'imap' && c.signed_in?.provider === kind ? c.signed_in : null;
  const readsThrough = kind !== 'imap' && current?.kind === kind && grant?.state === 'ok';
  const startLabel =
    kind === 'imap'
      ? busy
        ? t('reading.checking')
        : current
          ? t('reading.save')
          : t('reading.start')
      : grant?.state === 'revoked'
        ? t('reading.sign_in_again', { provider })
        : t('reading.sign_in_start', { provider });
  return (
    <section
      id={`reading-${id}`}
      tabIndex={-1}
      class="field"
      aria-label={t('reading.title')}
      style={{ borderTop: '1px solid var(--border)', paddingTop: 'var(--space-3)' }}
    >
      <h4 style={{ margin: 0 }}>{t('reading.title')}</h4>
      <span class="hint">{t('reading.hint')}</span>
      <ReaderState channel={c} />
      <form onSubmit={save}>
        <fieldset class="field auto-plain">
          <legend style={{ fontWeight: 600 }}>{t('reading.kind_title')}</legend>
          <div class="checks">
            {kinds.map(([value, label]) => (
              <label key={value}>
                <input type="radio" name={`reading-kind-${id}`} value={value} checked={kind === value} onChange={() => setKind(value)} />
                {label}
              </label>
            ))}
          </div>
        </fieldset>
        {kind !== 'imap' && (
          <p class="hint">
            {readsThrough && grant ? t('reading.signed_in_as', { provider, account: grant.account }) : t('reading.sign_in_hint', { provider })}
          </p>
        )}
        {kind === 'imap' && (
          <>
            <div style={{ display: 'grid', gridTemplateColumns: 'minmax(0, 2fr) minmax(5.5em, 1fr) minmax(0, 1fr)', gap: 'var(--space-2)' }}>
              <div class="field">
                <label for={`rhost-${id}`}>{t('reading.host')}</label>
                <input id={`rhost-${id}`} class="input" required maxLength={253} value={host} onInput={(e) => setHost(e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for={`rport-${id}`}>{t('channels.smtp_port')}</label>
                <input
                  id={`rport-${id}`}
                  class="input"
                  type="number"
                  min={1}
                  max={65535}
                  value={port}
                  onInput={(e) => setPort(Number(e.currentTarget.value))}
                />
              </div>
              <div class="field">
                <label for={`rtls-${id}`}>{t('channels.tls')}</label>
                <select
                  id={`rtls-${id}`}
                  class="select"
                  value={tls}
                  onChange={(e) => {
                    const next = e.currentTarget.value as Tls;
                    if (port === (tls === 'tls' ? 993 : 143)) setPort(next === 'tls' ? 993 : 143);
                    setTls(next);
                  }}
                >
                  <option value="tls">TLS</option>
                  <option value="starttls">STARTTLS</option>
                  <option value="none">{t('channels.tls_none')}</option>
                </select>
              </div>
            </div>
            <div class="field">
              <label for={`ruser-${id}`}>{t('channels.smtp_username')}</label>
              <input
                id={`ruser-${id}`}
                class="input"
                required
                autoComplete="off"
                maxLength={500}
                value={username}
                onInput={(e) => setUsername(e.currentTarget.value)}
              />
            </div>
            <div class="field">
              <label for={`rpw-${id}`}>{t('channels.smtp_password')}</label>
              <input
                id={`rpw-${id}`}
                class="input"
                type="password"
                autoComplete="new-password"
                maxLength={2000}
                required={!current?.password_set}
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
              {current?.password_set && <span class="hint">{t('reading.password_kept')}</span>}
            </div>
          </>
        )}
        <FormError error={error} />
        <div class="row-actions">
          {!readsThrough && (
            <button class="btn btn-primary" type="submit" disabled={busy}>
              {startLabel}
            </button>
          )}
          {current && (
            <button class="btn" type="button" disabled={busy} onClick={() => void send(null)}>
              {t('reading.stop')}
            </button>
          )}
        </div>
        <p class="hint">
          {t('reading.history')} <a href="/settings/migrations">{t('reading.history_link')}</a>
        </p>
      </form>
    </section>
  );
}
