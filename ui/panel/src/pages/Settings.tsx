// Settings: workspace, members, inboxes and channels, API keys, webhooks, saved replies and the
// person's own account, each at its own URL.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { ApiError, api, type BodyOf, errorText, must, type Schemas } from '../api';
import { Confirm } from '../components/Confirm';
import { DataTable, LoadedList } from '../components/DataTable';
import { FormError } from '../components/FormError';
import { InboxOptions } from '../components/InboxOptions';
import { InboxDetail, InboxList } from '../components/InboxSettings';
import { Loading, useLoad } from '../components/Loading';
import { Members, Sessions } from '../components/Members';
import { NotificationSettings } from '../components/Notifications';
import { Passkeys } from '../components/Passkeys';
import { SecretOnce } from '../components/Secret';
import { absoluteTime, type Locale, pickLocale, relativeTime, setLocale, t } from '../i18n';
import { inboxes, loadInboxes, me, membership, toast } from '../state';
import { MigrationsPage } from './Migrations';
import { SavedRepliesSettings } from './SavedRepliesSettings';

type Section = 'workspace' | 'members' | 'inboxes' | 'api-keys' | 'webhooks' | 'saved-replies' | 'migrations' | 'account';
const SECTIONS: [Section, Parameters<typeof t>[0], boolean][] = [
  ['workspace', 'settings.workspace', false],
  ['members', 'settings.members', false],
  ['inboxes', 'settings.inboxes', true],
  ['api-keys', 'settings.api_keys', true],
  ['webhooks', 'settings.webhooks', true],
  ['saved-replies', 'settings.saved_replies', false],
  ['migrations', 'settings.migrations', true],
  ['account', 'settings.account', false],
];

export function Settings() {
  const { params } = useRoute();
  const section = (SECTIONS.find(([s]) => s === params.section)?.[0] ?? 'workspace') as Section;
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const visible = SECTIONS.filter(([, , managersOnly]) => manager || !managersOnly);
  const current = SECTIONS.find(([id]) => id === section)!;
  // Below 900 px the section list is a disclosure behind a "Settings: <page>" button (the CSS hides
  // the button on wider screens, where the list is always shown); a chosen page or Esc closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  useEffect(() => setMenuOpen(false), [section]);
  return (
    <div class="settings">
      <nav
        class={menuOpen ? 'nav settings-nav open' : 'nav settings-nav'}
        aria-label={t('settings.title')}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && menuOpen) {
            setMenuOpen(false);
            toggle.current?.focus();
          }
        }}
      >
        <div class="nav-head">
          <a class="nav-link settings-back" href="/conversations">
            <span aria-hidden="true">←</span> <span class="settings-back-text">{t('settings.back')}</span>
          </a>
          <button
            ref={toggle}
            type="button"
            class="btn settings-menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="settings-sections"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            <span class="settings-menu-label">{t('settings.menu_current', { page: t(current[1]) })}</span>
            <span class="chevron" aria-hidden="true" />
          </button>
        </div>
        <div class="nav-scroll" id="settings-sections">
          {visible.map(([id, label]) => (
            <a key={id} class="nav-link" href={`/settings/${id}`} aria-current={section === id ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
              {t(label)}
            </a>
          ))}
        </div>
      </nav>
      <main class="settings-main" id="main" tabIndex={-1}>
        {current[2] && !manager ? <NoAccess /> : <SettingsSection section={section} id={params.id} manager={manager} />}
      </main>
    </div>
  );
}

/** A page only owners and admins may use, opened by someone else (a link, a typed URL). */
function NoAccess() {
  return (
    <section class="card" aria-labelledby="no-access-title">
      <h1 id="no-access-title">{t('settings.no_access')}</h1>
      <p class="muted">{t('settings.no_access_lead')}</p>
      <p>
        <a class="btn" href="/settings/account">
          {t('settings.no_access_back')}
        </a>
      </p>
    </section>
  );
}

function SettingsSection({ section, id, manager }: { section: Section; id: string | undefined; manager: boolean }) {
  const params = { id };
  return (
    <>
      {section === 'workspace' && <WorkspaceSettings manager={manager} />}
      {section === 'members' && <Members />}
      {section === 'inboxes' && (params.id ? <InboxDetail id={params.id} /> : <InboxList />)}
      {section === 'api-keys' && <ApiKeys />}
      {section === 'webhooks' && (params.id ? <WebhookDetail id={params.id} /> : <Webhooks />)}
      {section === 'saved-replies' && <SavedRepliesSettings />}
      {section === 'migrations' && <MigrationsPage id={params.id} />}
      {section === 'account' && <Account />}
    </>
  );
}

function WorkspaceSettings(props: { manager: boolean }) {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/workspace')));
  const [retention, setRetention] = useState('');
  const [deleting, setDeleting] = useState(false);
  useEffect(() => setRetention(data?.retention_days == null ? '' : String(data.retention_days)), [data]);
  if (!data) {
    return (
      <>
        <h1>{t('settings.workspace')}</h1>
        <Loading error={error} retry={reload} />
      </>
    );
  }
  const owner = membership.value?.role === 'owner';
  async function save(e: Event) {
    e.preventDefault();
    try {
      await must(api.PATCH('/v1/workspace', { body: { retention_days: retention.trim() === '' ? null : Number(retention) } }));
      toast(t('settings.saved'));
      void reload();
    } catch (err) {
      toast(t('action.failed', { error: errorText(err) }));
    }
  }
  return (
    <>
      <h1>{data.name}</h1>
      <p class="lead">{t('settings.workspace')}</p>
      <form class="card" onSubmit={save}>
        <div class="field">
          <label for="retention">{t('workspace.retention')}</label>
          <input
            id="retention"
            class="input"
            type="number"
            min={1}
            max={36500}
            inputMode="numeric"
            value={retention}
            disabled={!owner}
            aria-describedby="retention-hint"
            onInput={(e) => setRetention(e.currentTarget.value)}
          />
          <span class="hint" id="retention-hint">
            {t('workspace.retention_hint')}
          </span>
        </div>
        {owner ? (
          <button class="btn btn-primary" type="submit">
            {t('settings.save')}
          </button>
        ) : (
          <p class="muted">{t('settings.not_allowed')}</p>
        )}
      </form>
      {owner && (
        <section class="card danger-zone" aria-labelledby="ws-delete">
          <h2 id="ws-delete" style={{ marginTop: 0 }}>
            {t('workspace.delete')}
          </h2>
          <p>{t('workspace.delete_lead', { name: data.name })}</p>
          <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
            {t('workspace.delete')}
          </button>
        </section>
      )}
      {deleting && (
        <Confirm
          title={t('workspace.delete')}
          lead={t('workspace.delete_lead', { name: data.name })}
          action={t('workspace.delete')}
          typed={{ label: t('workspace.delete_confirm', { name: data.name }), value: data.name }}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/workspace', { body: { name: data.name } }));
              toast(t('workspace.deleted'));
              localStorage.removeItem('svc.workspace');
              location.assign('/');
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </>
  );
}

type Scope = NonNullable<BodyOf<'/v1/api-keys', 'post'>['scopes']>[number];
const SCOPES: Scope[] = [
  'conversations:read',
  'conversations:write',
  'contacts:read',
  'contacts:write',
  'webhooks:manage',
  'broadcasts:manage',
  'migrations:manage',
  'workspace:manage',
];

function ApiKeys() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/api-keys')));
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [limit, setLimit] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const [revoking, setRevoking] = useState<Schemas['ApiKey'] | null>(null);
  const [formError, setFormError] = useState<string | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    setFormError(null);
    try {
      const key = await must(
        api.POST('/v1/api-keys', {
          body: {
            name,
            ...(scopes.length ? { scopes } : {}),
            ...(limit.length ? { inbox_ids: limit } : {}),
            ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}),
          },
        }),
      );
      setSecret({ name: key.name, value: key.secret });
      setName('');
      setScopes([]);
      setLimit([]);
      setExpires('');
      void reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  }
  const toggle = <T,>(list: T[], v: T) => (list.includes(v) ? list.filter((x) => x !== v) : [...list, v]);
  return (
    <>
      <h1>{t('settings.api_keys')}</h1>
      <p class="lead">{t('keys.lead')}</p>
      {secret && <SecretOnce label={t('keys.created', { name: secret.name })} value={secret.value} />}
      <form class="card" onSubmit={create}>
        <h2 style={{ marginTop: 0 }}>{t('keys.new')}</h2>
        <div class="field">
          <label for="key-name">{t('keys.name')}</label>
          <input id="key-name" class="input" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <fieldset class="field" style={{ border: 0, padding: 0 }}>
          <legend style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('keys.scopes')}</legend>
          <span class="hint">{t('keys.scopes_hint')}</span>
          <div class="checks">
            {SCOPES.map((s) => (
              <label key={s}>
                <input type="checkbox" checked={scopes.includes(s)} onChange={() => setScopes(toggle(scopes, s))} />
                <span class="mono">{s}</span>
              </label>
            ))}
          </div>
        </fieldset>
        {inboxes.value.length > 1 && (
          <fieldset class="field" style={{ border: 0, padding: 0 }}>
            <legend style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('keys.inboxes')}</legend>
            <span class="hint">{t('keys.inboxes_hint')}</span>
            <div class="checks">
              {inboxes.value.map((i) => (
                <label key={i.id}>
                  <input type="checkbox" checked={limit.includes(i.id)} onChange={() => setLimit(toggle(limit, i.id))} />
                  {i.name}
                </label>
              ))}
            </div>
          </fieldset>
        )}
        <div class="field">
          <label for="key-expires">{t('keys.expires')}</label>
          <input id="key-expires" class="input" type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} style={{ maxWidth: '220px' }} />
        </div>
        <FormError error={formError} />
        <button class="btn btn-primary" type="submit">
          {t('settings.create')}
        </button>
      </form>
      <LoadedList rows={data?.data} error={error} retry={reload} empty={t('keys.empty')}>
        {(keys) => (
          <DataTable label={t('settings.api_keys')} columns={[t('keys.name'), t('keys.scopes'), t('keys.last_used'), { hidden: t('keys.revoke') }]}>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>
                  {k.name}
                  <div class="mono muted">{k.prefix}…</div>
                </td>
                <td class="mono">
                  {k.scopes.length === SCOPES.length ? t('keys.all_scopes') : k.scopes.join(', ')}
                  <div class="muted">
                    {k.inbox_ids ? k.inbox_ids.map((id) => inboxes.value.find((i) => i.id === id)?.name ?? id).join(', ') : t('keys.all_inboxes')}
                  </div>
                </td>
                <td>{k.last_used_at ? <time title={absoluteTime(k.last_used_at)}>{relativeTime(k.last_used_at)}</time> : t('keys.never')}</td>
                <td>
                  {k.revoked_at ? (
                    <span class="muted">{t('keys.revoked')}</span>
                  ) : (
                    <button class="btn btn-danger" type="button" onClick={() => setRevoking(k)}>
                      {t('keys.revoke')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
      {revoking && (
        <Confirm
          title={t('keys.revoke')}
          lead={t('keys.revoke_confirm', { name: revoking.name })}
          action={t('keys.revoke')}
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: revoking.id } } }));
              setRevoking(null);
              void reload();
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </>
  );
}

type EventType = NonNullable<BodyOf<'/v1/webhooks', 'post'>['events']>[number];
const EVENTS: EventType[] = ['conversation.created', 'conversation.updated', 'message.created', 'feedback.created', 'contact.updated', 'contact.deleted'];

function Webhooks() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/webhooks', { params: { query: { limit: 200 } } })));
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventType[]>([]);
  const [inbox, setInbox] = useState('');
  const [notes, setNotes] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  async function create(e: Event) {
    e.preventDefault();
    setFormError(null);
    try {
      const w = await must(api.POST('/v1/webhooks', { body: { url, ...(events.length ? { events } : {}), inbox_id: inbox || null, include_notes: notes } }));
      setSecret(w.secret);
      setUrl('');
      setEvents([]);
      void reload();
    } catch (err) {
      setFormError(errorText(err));
    }
  }
  return (
    <>
      <h1>{t('settings.webhooks')}</h1>
      <p class="lead">{t('webhooks.lead')}</p>
      {secret && <SecretOnce label={t('webhooks.created')} value={secret} />}
      <form class="card" onSubmit={create}>
        <h2 style={{ marginTop: 0 }}>{t('webhooks.new')}</h2>
        <div class="field">
          <label for="wh-url">{t('webhooks.url')}</label>
          <input
            id="wh-url"
            class="input"
            type="url"
            required
            placeholder="https://example.com/hooks/svc"
            value={url}
            aria-describedby="wh-url-hint"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
          <span class="hint" id="wh-url-hint">
            {t('webhooks.url_hint')}
          </span>
        </div>
        <fieldset class="field" style={{ border: 0, padding: 0 }}>
          <legend style={{ fontWeight: 600, fontSize: 'var(--text-sm)' }}>{t('webhooks.events')}</legend>
          <span class="hint">{t('webhooks.events_hint')}</span>
          <div class="checks">
            {EVENTS.map((ev) => (
              <label key={ev}>
                <input
                  type="checkbox"
                  checked={events.includes(ev)}
                  onChange={() => setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev])}
                />
                <span class="mono">{ev}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <div class="field">
          <label for="wh-inbox">{t('webhooks.inbox')}</label>
          <select id="wh-inbox" class="select" value={inbox} onChange={(e) => setInbox(e.currentTarget.value)}>
            <option value="">{t('webhooks.any_inbox')}</option>
            <InboxOptions />
          </select>
        </div>
        <label class="field" style={{ flexDirection: 'row', gap: 'var(--space-2)', alignItems: 'center', fontWeight: 400 }}>
          <input type="checkbox" checked={notes} onChange={() => setNotes(!notes)} />
          {t('webhooks.include_notes')}
        </label>
        <FormError error={formError} />
        <button class="btn btn-primary" type="submit">
          {t('settings.create')}
        </button>
      </form>
      <LoadedList rows={data?.data} error={error} retry={reload} empty={t('webhooks.empty')}>
        {(hooks) => (
          <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
            {hooks.map((w) => (
              <li key={w.id} class="card">
                <a href={`/settings/webhooks/${w.id}`} class="mono">
                  {w.url}
                </a>
                <div class={w.enabled ? 'pill-ok' : 'pill-bad'}>
                  {w.enabled ? t('webhooks.enabled') : t('webhooks.disabled', { reason: w.disabled_reason ?? '' })}
                </div>
              </li>
            ))}
          </ul>
        )}
      </LoadedList>
    </>
  );
}

function WebhookDetail(props: { id: string }) {
  const { route } = useLocation();
  const path = { webhookId: props.id };
  const hook = useLoad(() => must(api.GET('/v1/webhooks/{webhookId}', { params: { path } })), [props.id]);
  const log = useLoad(() => must(api.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path } })), [props.id]);
  const [secret, setSecret] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const w = hook.data;
  if (!w) return <Loading error={hook.error} retry={hook.reload} />;
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      void hook.reload();
      void log.reload();
    } catch (err) {
      toast(t('action.failed', { error: err instanceof ApiError ? err.message : errorText(err) }));
    }
  };
  return (
    <>
      <p>
        <a href="/settings/webhooks">← {t('settings.webhooks')}</a>
      </p>
      <h1 class="mono" style={{ fontSize: 'var(--text-lg)' }}>
        {w.url}
      </h1>
      <p class={w.enabled ? 'pill-ok' : 'pill-bad'}>
        {w.enabled ? t('webhooks.enabled') : t('webhooks.disabled', { reason: w.disabled_reason ?? '' })}
        {w.failing_since && <span class="muted"> · {t('webhooks.failing_since', { when: absoluteTime(w.failing_since) })}</span>}
      </p>
      <p class="mono muted">{(w.events ?? []).join(', ')}</p>
      {secret && <SecretOnce label={t('webhooks.rotated')} value={secret} />}
      <div class="row-actions">
        {!w.enabled && (
          <button class="btn btn-primary" type="button" onClick={() => void act(() => must(api.POST('/v1/webhooks/{webhookId}/enable', { params: { path } })))}>
            {t('webhooks.enable')}
          </button>
        )}
        <button
          class="btn"
          type="button"
          onClick={() => void act(async () => setSecret((await must(api.POST('/v1/webhooks/{webhookId}/secret', { params: { path } }))).secret))}
        >
          {t('webhooks.rotate')}
        </button>
        <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
          {t('webhooks.delete')}
        </button>
      </div>
      <h2>{t('webhooks.deliveries')}</h2>
      <LoadedList rows={log.data?.data} error={log.error} retry={log.reload} empty={t('webhooks.no_deliveries')}>
        {(attempts) => (
          <DataTable
            label={t('webhooks.deliveries')}
            columns={[t('webhooks.when'), t('webhooks.event'), t('webhooks.result'), t('webhooks.answer'), { hidden: t('webhooks.redeliver') }]}
          >
            {attempts.map((a) => (
              <tr key={a.id}>
                <td>
                  <time title={absoluteTime(a.started_at)}>{relativeTime(a.started_at)}</time>
                  {a.latency_ms != null && <div class="muted">{t('webhooks.latency', { ms: a.latency_ms })}</div>}
                </td>
                <td class="mono">{a.event_type ?? a.event_id}</td>
                <td class={a.status === 'succeeded' ? 'pill-ok' : 'pill-bad'}>
                  {a.status_code ?? a.status}
                  {a.error && <div class="muted">{a.error}</div>}
                </td>
                <td class="mono">{a.response ?? ''}</td>
                <td>
                  <button
                    class="btn"
                    type="button"
                    onClick={() =>
                      void act(async () => {
                        await must(
                          api.POST('/v1/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', {
                            params: { path: { webhookId: props.id, deliveryId: a.delivery_id } },
                          }),
                        );
                        toast(t('webhooks.redelivered'));
                      })
                    }
                  >
                    {t('webhooks.redeliver')}
                  </button>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
      {deleting && (
        <Confirm
          title={t('webhooks.delete')}
          lead={t('webhooks.delete_confirm', { url: w.url })}
          action={t('webhooks.delete')}
          onClose={() => setDeleting(false)}
          onConfirm={() =>
            act(async () => {
              await must(api.DELETE('/v1/webhooks/{webhookId}', { params: { path } }));
              route('/settings/webhooks');
            })
          }
        />
      )}
    </>
  );
}

function Account() {
  const person = me.value!.person;
  const [deleting, setDeleting] = useState(false);
  return (
    <>
      <h1>{t('settings.account')}</h1>
      <Profile />
      <Passkeys />
      <NotificationSettings />
      <Sessions />
      <section class="card danger-zone" aria-labelledby="acct-delete">
        <h2 id="acct-delete" style={{ marginTop: 0 }}>
          {t('account.delete')}
        </h2>
        <p>{t('account.delete_lead')}</p>
        <button class="btn btn-danger" type="button" onClick={() => setDeleting(true)}>
          {t('account.delete')}
        </button>
      </section>
      {deleting && (
        <Confirm
          title={t('account.delete')}
          lead={t('account.delete_lead')}
          action={t('account.delete')}
          typed={{ label: t('account.delete_confirm', { email: person.email }), value: person.email }}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/me', { body: { email: person.email } }));
              location.assign('/sign-in');
            } catch (err) {
              toast(err instanceof ApiError && err.code === 'only_owner' ? t('account.only_owner') : t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </>
  );
}

/** The person's own name and panel language; a new language re-renders the panel at once. */
function Profile() {
  const person = me.value!.person;
  const [name, setName] = useState(person.name ?? '');
  const [lang, setLang] = useState<Locale>(pickLocale(person.locale));
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function save(e: Event) {
    e.preventDefault();
    setFormError(null);
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > 100) return setFormError(t('account.name_invalid'));
    setBusy(true);
    try {
      const answer = await must(api.PATCH('/v1/me', { body: { name: trimmed, locale: lang } }));
      me.value = { ...me.value!, person: answer.person };
      setName(answer.person.name ?? '');
      setLocale(answer.person.locale);
      void loadInboxes();
      toast(t('settings.saved'));
    } catch (err) {
      setFormError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="card" onSubmit={save} aria-labelledby="profile-title" noValidate>
      <h2 id="profile-title" style={{ marginTop: 0 }}>
        {t('account.profile')}
      </h2>
      <dl>
        <dt class="muted">{t('account.email')}</dt>
        <dd style={{ margin: 0 }}>{person.email}</dd>
      </dl>
      <div class="field">
        <label for="my-name">{t('account.name')}</label>
        <input
          id="my-name"
          class="input"
          autoComplete="name"
          maxLength={100}
          value={name}
          aria-describedby="my-name-hint"
          aria-invalid={formError ? true : undefined}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <span class="hint" id="my-name-hint">
          {t('account.name_hint')}
        </span>
      </div>
      <div class="field">
        <label for="my-locale">{t('account.locale')}</label>
        <select id="my-locale" class="select" value={lang} onChange={(e) => setLang(e.currentTarget.value as Locale)}>
          <option value="en" lang="en">
            English
          </option>
          <option value="tr" lang="tr">
            Türkçe
          </option>
        </select>
      </div>
      <FormError error={formError} />
      <button class="btn btn-primary" type="submit" disabled={busy}>
        {t('settings.save')}
      </button>
    </form>
  );
}
