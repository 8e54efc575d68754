// My account → passkeys: add (the browser's own prompt), rename, remove.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { relativeTime, t } from '../../i18n';
import { registerPasskey } from '../../passkeys';
import { toast } from '../../state';

type Passkey = { id: string; name: string | null; synced: boolean; created_at: string; last_used_at: string | null };

export function Passkeys() {
  const [keys, setKeys] = useState<Passkey[] | null>(null);
  const [removing, setRemoving] = useState<Passkey | null>(null);
  const [renaming, setRenaming] = useState<string | null>(null);
  const [name, setName] = useState('');
  const load = async () => setKeys((await must(api.GET('/v1/me/passkeys'))).data as Passkey[]);
  useEffect(() => {
    void load().catch((e) => toast(errorText(e)));
  }, []);
  return (
    <section class="card" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title" style={{ marginTop: 0 }}>
        {t('passkeys.title')}
      </h2>
      <p class="muted">{t('passkeys.lead')}</p>
      {keys && keys.length === 0 && <p>{t('passkeys.none')}</p>}
      {keys && keys.length > 0 && (
        <ul role="list" style={{ listStyle: 'none', padding: 0 }}>
          {keys.map((k) => (
            <li
              key={k.id}
              style={{
                display: 'flex',
                flexWrap: 'wrap',
                gap: 'var(--space-2)',
                alignItems: 'center',
                padding: 'var(--space-2) 0',
                borderBottom: '1px solid var(--border)',
              }}
            >
              {renaming === k.id ? (
                <form
                  style={{ display: 'flex', gap: 'var(--space-2)', flex: 1 }}
                  onSubmit={async (e) => {
                    e.preventDefault();
                    try {
                      await must(api.PATCH('/v1/me/passkeys/{passkeyId}', { params: { path: { passkeyId: k.id } }, body: { name: name.trim() || null } }));
                      setRenaming(null);
                      await load();
                    } catch (err) {
                      toast(t('action.failed', { error: errorText(err) }));
                    }
                  }}
                >
                  <label class="visually-hidden" for={`pk-${k.id}`}>
                    {t('passkeys.name')}
                  </label>
                  <input
                    id={`pk-${k.id}`}
                    class="input"
                    maxLength={100}
                    value={name}
                    autoFocus
                    onInput={(e) => setName(e.currentTarget.value)}
                    onKeyDown={(e) => e.key === 'Escape' && setRenaming(null)}
                  />
                  <button class="btn btn-primary" type="submit">
                    {t('settings.save')}
                  </button>
                </form>
              ) : (
                <span class="row-text">
                  <strong>{k.name ?? t('passkeys.unnamed')}</strong>
                  <span class="muted">
                    {' · '}
                    {t('passkeys.created', { when: relativeTime(k.created_at) })}
                    {k.last_used_at && ` · ${t('passkeys.used', { when: relativeTime(k.last_used_at) })}`}
                    {k.synced && ` · ${t('passkeys.synced')}`}
                  </span>
                </span>
              )}
              {renaming !== k.id && (
                <>
                  <button class="btn" type="button" onClick={() => (setRenaming(k.id), setName(k.name ?? ''))}>
                    {t('passkeys.rename')}
                  </button>
                  <button class="btn btn-danger" type="button" onClick={() => setRemoving(k)}>
                    {t('passkeys.delete')}
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <button
        class="btn btn-primary"
        type="button"
        onClick={async () => {
          try {
            await registerPasskey();
            toast(t('passkeys.added'));
            await load();
          } catch (err) {
            if (!(err instanceof DOMException && err.name === 'NotAllowedError')) toast(t('action.failed', { error: errorText(err) }));
          }
        }}
      >
        {t('passkeys.add')}
      </button>
      {removing && (
        <Confirm
          title={t('passkeys.delete')}
          lead={t('passkeys.delete_lead', { name: removing.name ?? t('passkeys.unnamed') })}
          action={t('passkeys.delete')}
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            try {
              await must(api.DELETE('/v1/me/passkeys/{passkeyId}', { params: { path: { passkeyId: removing.id } } }));
              setRemoving(null);
              await load();
            } catch (err) {
              toast(t('action.failed', { error: errorText(err) }));
            }
          }}
        />
      )}
    </section>
  );
}
