// Settings › API keys: create (the secret is shown once), list and revoke.
import { useState } from 'preact/hooks';
import { api, type BodyOf, errorText, must, type Schemas } from '../../api';
import { Confirm } from '../../components/Confirm';
import { DataTable, LoadedList } from '../../components/DataTable';
import { FormError } from '../../components/FormError';
import { useLoad } from '../../components/Loading';
import { SecretOnce } from '../../components/Secret';
import { absoluteTime, relativeTime, t } from '../../i18n';
import { inboxes, toast } from '../../state';

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
  'analytics:read',
  'analytics:write',
];

export function ApiKeys() {
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
