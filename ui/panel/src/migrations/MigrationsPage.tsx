// Settings › Move to the service: the migrations list and the eight-step wizard (Source, Connect,
// Choose, Map, Review, Copy, Switch, Done) for owners and admins. The step shown follows the
// migration's state; `?step=` opens an earlier step while its action is allowed. Every state's
// screen offers exactly the migration's allowed_actions (the action bar), and live changes come
// from realtime (migration.progress, migration.updated, migration.forwarding_confirmation).
import { useEffect } from 'preact/hooks';
import { api, must } from '../api';
import { DataTable, LoadedList } from '../components/DataTable';
import { useLoad } from '../components/Loading';
import { absoluteTime, relativeTime, t } from '../i18n';
import { connectRealtime, onEvent } from '../realtime';
import { membership, workspaceId } from '../state';
import './migration.css';
import { loadPresets, presetText, SourceContext, sourceOf } from './model';
import { StatePill } from './Stepper';
import { SourceStep } from './steps/SourceStep';
import { Wizard } from './Wizard';

export function MigrationsPage(props: { id?: string }) {
  const role = membership.value?.role;
  useEffect(() => {
    if (workspaceId.value && (role === 'owner' || role === 'admin')) connectRealtime(workspaceId.value);
  }, [workspaceId.value, role]);
  if (role !== 'owner' && role !== 'admin') return <p class="empty">{t('mig.not_allowed')}</p>;
  if (!props.id) return <MigrationList />;
  if (props.id === 'new') return <SourceStep />;
  return <Wizard key={props.id} id={props.id} />;
}

function MigrationList() {
  const { data, error, reload } = useLoad(() => must(api.GET('/v1/migrations', { params: { query: { limit: 200 } } })));
  const presets = useLoad(loadPresets);
  useEffect(() => onEvent((ev) => ev.type === 'migration.updated' && void reload()), []);
  return (
    <>
      <h1>{t('mig.title')}</h1>
      <p class="lead">{t('mig.lead')}</p>
      <p>
        <a class="btn btn-primary mig-link-btn" href="/settings/migrations/new">
          {t('mig.new')}
        </a>
      </p>
      <LoadedList rows={data?.data} error={error} retry={reload} empty={t('mig.empty')}>
        {(migrations) => (
          <DataTable label={t('mig.title')} columns={[t('mig.list.mailbox'), t('mig.list.state'), t('mig.list.progress'), t('mig.list.created')]}>
            {migrations.map((m) => (
              <tr key={m.id}>
                <td>
                  <a href={`/settings/migrations/${m.id}`}>{m.source_address ?? presetText({ id: m.provider, name: m.provider_name }, 'name')}</a>
                  {m.source_address && <div class="muted">{presetText({ id: m.provider, name: m.provider_name }, 'name')}</div>}
                </td>
                <td>
                  <SourceContext.Provider value={sourceOf(presets.data ?? [], m.provider)}>
                    <StatePill state={m.state} />
                  </SourceContext.Provider>
                </td>
                <td>{m.progress.total > 0 ? t('mig.list.copied', { copied: m.progress.copied, percent: m.progress.percent }) : '—'}</td>
                <td>
                  <time title={absoluteTime(m.created_at)}>{relativeTime(m.created_at)}</time>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </LoadedList>
    </>
  );
}
