// Settings › Workspace: its name and the workspace-wide options.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must } from '../../api';
import { Confirm } from '../../components/Confirm';
import { Loading, useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { membership, toast } from '../../state';

export function WorkspaceSettings(props: { manager: boolean }) {
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
