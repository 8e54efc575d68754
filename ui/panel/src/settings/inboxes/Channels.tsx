// An inbox's channels on its settings page: e-mail channels (SMTP with a connection test, forwarding
// address), chat widgets (origins, greeting, the embed snippet), adding and deleting one.
import { useState } from 'preact/hooks';
import { api, type BodyOf, errorText, must, type Schemas } from '../../api';
import { Confirm } from '../../components/Confirm';
import { CopyField } from '../../components/Secret';
import { t } from '../../i18n';
import { toast } from '../../state';
import { MailboxReading } from './MailboxReading';
import { SendingChoice, SignInAccount, type SmtpAuth } from './SendingAccount';

export type Channel = Schemas['Channel'];
type ChannelPatch = BodyOf<'/v1/channels/{channelId}', 'patch'>;

const fail = (e: unknown) => toast(t('action.failed', { error: errorText(e) }));

function ChannelShell(props: { channel: Channel; onChanged: () => void; children: preact.ComponentChildren }) {
  const [deleting, setDeleting] = useState(false);
  return (
    <section class="card" aria-label={`${props.channel.kind === 'email' ? t('channels.kind_email') : t('channels.kind_chat')}: ${props.channel.name}`}>
      <h3 style={{ marginTop: 0 }}>
        {props.channel.name} <span class="badge">{props.channel.kind === 'email' ? t('channels.kind_email') : t('channels.kind_chat')}</span>
      </h3>
      {props.children}
      <p>
        <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
          {t('channels.delete')}
        </button>
      </p>
      {deleting && (
        <Confirm
          title={t('channels.delete')}
          lead={t('channels.delete_lead', { name: props.channel.name })}
          action={t('channels.delete')}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/channels/{channelId}', { params: { path: { channelId: props.channel.id } } }));
              setDeleting(false);
              props.onChanged();
            } catch (err) {
              fail(err);
            }
          }}
        />
      )}
    </section>
  );
}

export function EmailChannel(props: { channel: Channel; onChanged: () => void }) {
  const c = props.channel;
  const id = c.id;
  const [draft, setDraft] = useState<ChannelPatch>({
    display_name: c.display_name,
    from_address: c.from_address,
    smtp_host: c.smtp?.host ?? '',
    smtp_port: c.smtp?.port ?? 587,
    tls: (c.smtp?.tls as ChannelPatch['tls']) ?? 'starttls',
    smtp_username: c.smtp?.username ?? '',
  });
  const [password, setPassword] = useState('');
  const [mode, setMode] = useState<SmtpAuth>((c.smtp_auth as SmtpAuth | undefined) ?? 'password');
  const [result, setResult] = useState<Schemas['SmtpTest'] | null>(null);
  const set = (patch: ChannelPatch) => setDraft({ ...draft, ...patch });
  async function save(e: Event) {
    e.preventDefault();
    const body: ChannelPatch = {
      ...draft,
      smtp_host: draft.smtp_host?.trim() || null,
      display_name: draft.display_name || null,
      from_address: draft.from_address || null,
    };
    if (!body.smtp_host) {
      delete body.smtp_port;
      delete body.tls;
      delete body.smtp_username;
    } else body.smtp_username = draft.smtp_username || null;
    if (password) body.smtp_password = password;
    // A sign-in is saved by its own button; Save keeps it and changes only the names.
    if (mode !== 'password') for (const k of ['smtp_host', 'smtp_port', 'tls', 'smtp_username', 'smtp_password'] as const) delete body[k];
    else if (c.smtp_auth !== 'password') body.smtp_auth = 'password';
    try {
      await must(api.PATCH('/v1/channels/{channelId}', { params: { path: { channelId: id } }, body }));
      setPassword('');
      toast(t('settings.saved'));
      props.onChanged();
    } catch (err) {
      fail(err);
    }
  }
  return (
    <ChannelShell channel={c} onChanged={props.onChanged}>
      <p class="mono">{c.address}</p>
      {c.forwarding_address && (
        <div class="field">
          <span style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('channels.forwarding')}</span>
          <span class="hint">{t('channels.forwarding_hint')}</span>
          <CopyField label={t('channels.forwarding')} value={c.forwarding_address} />
          <button
            class="btn"
            type="button"
            onClick={() =>
              void must(api.POST('/v1/channels/{channelId}/forwarding-address/rotate', { params: { path: { channelId: id } } })).then(props.onChanged, fail)
            }
          >
            {t('channels.rotate')}
          </button>
        </div>
      )}
      <form onSubmit={save}>
        <div class="field">
          <label for={`dn-${id}`}>{t('channels.display_name')}</label>
          <input id={`dn-${id}`} class="input" maxLength={200} value={draft.display_name ?? ''} onInput={(e) => set({ display_name: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for={`fa-${id}`}>{t('channels.from_address')}</label>
          <input
            id={`fa-${id}`}
            class="input"
            type="email"
            maxLength={254}
            value={draft.from_address ?? ''}
            onInput={(e) => set({ from_address: e.currentTarget.value })}
          />
        </div>
        <SendingChoice id={id} mode={mode} onChange={setMode} />
        {mode !== 'password' && <SignInAccount channel={c} provider={mode} onChanged={props.onChanged} />}
        <fieldset class="field" style={{ border: 0, padding: 0, display: mode === 'password' ? undefined : 'none' }}>
          <legend style={{ fontWeight: 600 }}>{t('channels.smtp')}</legend>
          <span class="hint">{t('channels.smtp_hint')}</span>
          <div style={{ display: 'grid', gridTemplateColumns: 'minmax(0, 2fr) minmax(0, 1fr) minmax(0, 1fr)', gap: 'var(--space-2)' }}>
            <div class="field">
              <label for={`host-${id}`}>{t('channels.smtp_host')}</label>
              <input id={`host-${id}`} class="input" maxLength={253} value={draft.smtp_host ?? ''} onInput={(e) => set({ smtp_host: e.currentTarget.value })} />
            </div>
            <div class="field">
              <label for={`port-${id}`}>{t('channels.smtp_port')}</label>
              <input
                id={`port-${id}`}
                class="input"
                type="number"
                min={1}
                max={65535}
                value={draft.smtp_port}
                onInput={(e) => set({ smtp_port: Number(e.currentTarget.value) })}
              />
            </div>
            <div class="field">
              <label for={`tls-${id}`}>{t('channels.tls')}</label>
              <select id={`tls-${id}`} class="select" value={draft.tls} onChange={(e) => set({ tls: e.currentTarget.value as ChannelPatch['tls'] })}>
                <option value="starttls">STARTTLS</option>
                <option value="tls">TLS</option>
                <option value="none">{t('channels.tls_none')}</option>
              </select>
            </div>
          </div>
          <div class="field">
            <label for={`user-${id}`}>{t('channels.smtp_username')}</label>
            <input
              id={`user-${id}`}
              class="input"
              autoComplete="off"
              maxLength={500}
              value={draft.smtp_username ?? ''}
              onInput={(e) => set({ smtp_username: e.currentTarget.value })}
            />
          </div>
          <div class="field">
            <label for={`pw-${id}`}>{t('channels.smtp_password')}</label>
            <input
              id={`pw-${id}`}
              class="input"
              type="password"
              autoComplete="new-password"
              maxLength={2000}
              value={password}
              aria-describedby={`pw-hint-${id}`}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
            {c.smtp?.password_set && (
              <span class="hint" id={`pw-hint-${id}`}>
                {t('channels.password_set')}{' '}
                <button
                  class="btn btn-ghost"
                  type="button"
                  onClick={() =>
                    void must(api.PATCH('/v1/channels/{channelId}', { params: { path: { channelId: id } }, body: { smtp_password: null } })).then(
                      props.onChanged,
                      fail,
                    )
                  }
                >
                  {t('channels.password_remove')}
                </button>
              </span>
            )}
          </div>
        </fieldset>
        <div class="row-actions">
          <button class="btn btn-primary" type="submit">
            {t('settings.save')}
          </button>
          {c.smtp?.host && mode === c.smtp_auth && (
            <button
              class="btn"
              type="button"
              onClick={() => void must(api.POST('/v1/channels/{channelId}/smtp-test', { params: { path: { channelId: id } } })).then(setResult, fail)}
            >
              {t('channels.test')}
            </button>
          )}
        </div>
        {result && (
          <p role="status" class={result.ok ? 'pill-ok' : 'pill-bad'}>
            {result.ok
              ? t('channels.test_ok', { message: result.message })
              : t('channels.test_failed', { step: result.failed_step ?? '', message: result.message })}
          </p>
        )}
      </form>
      <MailboxReading channel={c} onChanged={props.onChanged} />
    </ChannelShell>
  );
}

export function ChatChannel(props: { channel: Channel; onChanged: () => void }) {
  const c = props.channel;
  const [origins, setOrigins] = useState((c.origins ?? []).join('\n'));
  const [greeting, setGreeting] = useState(c.greeting ?? '');
  const [anonymous, setAnonymous] = useState(!!c.allow_anonymous);
  const [askEmail, setAskEmail] = useState(!!c.ask_email_offline);
  const snippet = `<script src="${location.origin}/widget.js" data-key="${c.public_key}" async></script>`;
  return (
    <ChannelShell channel={c} onChanged={props.onChanged}>
      <p class="hint">{t('channels.embed')}</p>
      <CopyField label={t('channels.embed')} value={snippet} />
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            const list = origins
              .split(/\s+/)
              .map((o) => o.trim())
              .filter(Boolean);
            await must(
              api.PATCH('/v1/channels/{channelId}', {
                params: { path: { channelId: c.id } },
                body: { origins: list, greeting: greeting.trim() || null, allow_anonymous: anonymous, ask_email_offline: askEmail },
              }),
            );
            toast(t('settings.saved'));
            props.onChanged();
          } catch (err) {
            fail(err);
          }
        }}
      >
        <div class="field">
          <label for={`origins-${c.id}`}>{t('channels.origins')}</label>
          <textarea id={`origins-${c.id}`} class="textarea mono" rows={3} value={origins} onInput={(e) => setOrigins(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={`greeting-${c.id}`}>{t('channels.greeting')}</label>
          <textarea id={`greeting-${c.id}`} class="textarea" rows={2} maxLength={2000} value={greeting} onInput={(e) => setGreeting(e.currentTarget.value)} />
        </div>
        <label class="field" style={{ flexDirection: 'row', gap: 'var(--space-2)', fontWeight: 400 }}>
          <input type="checkbox" checked={anonymous} onChange={() => setAnonymous(!anonymous)} />
          {t('channels.allow_anonymous')}
        </label>
        <label class="field" style={{ flexDirection: 'row', gap: 'var(--space-2)', fontWeight: 400 }}>
          <input type="checkbox" checked={askEmail} onChange={() => setAskEmail(!askEmail)} />
          {t('channels.ask_email')}
        </label>
        <button class="btn btn-primary" type="submit">
          {t('settings.save')}
        </button>
      </form>
    </ChannelShell>
  );
}

export function NewChannel(props: { inboxId: string; onCreated: () => void }) {
  const [kind, setKind] = useState<'email' | 'chat'>('email');
  const [name, setName] = useState('');
  const [address, setAddress] = useState('');
  const [origin, setOrigin] = useState('');
  return (
    <form
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const body =
            kind === 'email'
              ? { kind, inbox_id: props.inboxId, name, address }
              : { kind, inbox_id: props.inboxId, name, origins: origin.split(/\s+/).filter(Boolean) };
          await must(api.POST('/v1/channels', { body }));
          setName('');
          setAddress('');
          setOrigin('');
          props.onCreated();
        } catch (err) {
          fail(err);
        }
      }}
    >
      <div class="composer-tabs" role="group" aria-label={t('channels.title')}>
        <button class="chip" type="button" aria-pressed={kind === 'email'} onClick={() => setKind('email')}>
          {t('channels.new_email')}
        </button>
        <button class="chip" type="button" aria-pressed={kind === 'chat'} onClick={() => setKind('chat')}>
          {t('channels.new_chat')}
        </button>
      </div>
      <div class="field">
        <label for="ch-name">{t('channels.name')}</label>
        <input id="ch-name" class="input" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      {kind === 'email' ? (
        <div class="field">
          <label for="ch-address">{t('channels.address')}</label>
          <input id="ch-address" class="input" type="email" required value={address} onInput={(e) => setAddress(e.currentTarget.value)} />
        </div>
      ) : (
        <div class="field">
          <label for="ch-origin">{t('channels.origins')}</label>
          <textarea
            id="ch-origin"
            class="textarea mono"
            rows={2}
            required
            placeholder="https://www.example.com"
            value={origin}
            onInput={(e) => setOrigin(e.currentTarget.value)}
          />
        </div>
      )}
      <button class="btn btn-primary" type="submit">
        {t('settings.create')}
      </button>
    </form>
  );
}
