// Step 4, Map: the target inbox, the people behind the old addresses and help desk agents, labels.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../../api';
import { FormError } from '../../components/FormError';
import { InboxOptions } from '../../components/InboxOptions';
import { useLoad } from '../../components/Loading';
import { t } from '../../i18n';
import { inboxes, loadInboxes, me, members } from '../../state';
import { formatBytes } from '../MigrationUpload';
import { type Migration, type PlanSummary, useSourceText } from '../model';

export function MapStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const st = useSourceText();
  const { route } = useLocation();
  const [inboxId, setInboxId] = useState(m.inbox_id ?? inboxes.value[0]?.id ?? '');
  const channels = useLoad(
    () =>
      inboxId
        ? must(api.GET('/v1/channels', { params: { query: { inbox_id: inboxId } } })).then((r) => r.data.filter((c) => c.kind === 'email'))
        : Promise.resolve([]),
    [inboxId],
  );
  const [channelId, setChannelId] = useState(m.channel_id ?? '');
  const [newChannel, setNewChannel] = useState({ name: '', address: m.source_address ?? '' });
  const startTeam = { ...(m.source_address ? { [m.source_address]: null } : {}), ...m.team_members };
  const [team, setTeam] = useState<Record<string, string | null>>(startTeam);
  const [extra, setExtra] = useState('');
  const summary = m.plan.summary as PlanSummary | null;
  const chosenFolders = m.folders ?? summary?.folders.filter((f) => !f.never_read).map((f) => f.path) ?? [];
  const [labels, setLabels] = useState<Record<string, string>>(Object.fromEntries(Object.entries(m.folder_labels).map(([k, v]) => [k, v ?? ''])));
  const [closeAfter, setCloseAfter] = useState(String(m.close_after_days));
  const [skipAutomatic, setSkipAutomatic] = useState(m.skip_automatic);
  const [keepOriginals, setKeepOriginals] = useState(m.keep_originals);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (channels.data && !channels.data.some((c) => c.id === channelId)) setChannelId(channels.data[0]?.id ?? '');
  }, [channels.data]);
  const locked = !!m.copy_started_at;

  async function createChannel() {
    setError(null);
    try {
      const c = await must(
        api.POST('/v1/channels', { body: { kind: 'email', inbox_id: inboxId, name: newChannel.name || newChannel.address, address: newChannel.address } }),
      );
      await channels.reload();
      setChannelId(c.id);
      void loadInboxes();
    } catch (err) {
      setError(errorText(err));
    }
  }
  async function save(e: Event) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const folderLabels = Object.fromEntries(
        Object.entries(labels)
          .filter(([, v]) => v.trim() !== '')
          .map(([k, v]) => [k, v.trim()]),
      );
      const body = {
        ...(locked ? {} : { inbox_id: inboxId || null, channel_id: channelId || null }),
        team_members: Object.fromEntries(Object.entries(team).filter(([a]) => a.trim())),
        folder_labels: folderLabels,
        close_after_days: Number(closeAfter),
        skip_automatic: skipAutomatic,
        keep_originals: keepOriginals,
      };
      let next = (await must(api.PATCH('/v1/migrations/{migrationId}', { params: { path: { migrationId: m.id } }, body }))) as Migration;
      if (next.state === 'connected' && next.allowed_actions.includes('scan'))
        next = (await must(api.POST('/v1/migrations/{migrationId}/scan', { params: { path: { migrationId: m.id } } }))) as Migration;
      props.onChanged(next);
      route(`/settings/migrations/${m.id}?step=review`);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="card" onSubmit={save}>
      <h2 style={{ marginTop: 0 }}>{t('mig.map.title')}</h2>
      <div class="mig-inline">
        <div class="field">
          <label for="mig-inbox">{t('mig.map.inbox')}</label>
          <select id="mig-inbox" class="select" value={inboxId} disabled={locked} onChange={(e) => setInboxId(e.currentTarget.value)}>
            <InboxOptions />
          </select>
        </div>
        <div class="field">
          <label for="mig-channel">{t('mig.map.channel')}</label>
          <select
            id="mig-channel"
            class="select"
            value={channelId}
            disabled={locked || !channels.data?.length}
            onChange={(e) => setChannelId(e.currentTarget.value)}
          >
            {(channels.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.address ? `${c.name} <${c.address}>` : c.name}
              </option>
            ))}
          </select>
        </div>
      </div>
      {channels.data && channels.data.length === 0 && !locked && (
        <fieldset class="field mig-box">
          <legend>{t('mig.map.no_channel')}</legend>
          <div class="mig-inline">
            <div class="field">
              <label for="mig-ch-name">{t('channels.name')}</label>
              <input
                id="mig-ch-name"
                class="input"
                maxLength={200}
                value={newChannel.name}
                onInput={(e) => setNewChannel({ ...newChannel, name: e.currentTarget.value })}
              />
            </div>
            <div class="field">
              <label for="mig-ch-address">{t('channels.address')}</label>
              <input
                id="mig-ch-address"
                class="input"
                type="email"
                value={newChannel.address}
                onInput={(e) => setNewChannel({ ...newChannel, address: e.currentTarget.value })}
              />
            </div>
          </div>
          <button class="btn" type="button" disabled={!newChannel.address.trim()} onClick={() => void createChannel()}>
            {t('mig.map.create_channel')}
          </button>
        </fieldset>
      )}
      <fieldset class="field mig-box">
        <legend>{t('mig.map.team')}</legend>
        <span class="hint">{st('mig.map.team_hint')}</span>
        <table class="table mig-map-table">
          <tbody>
            {Object.entries(team).map(([addr, person]) => (
              <tr key={addr}>
                <th scope="row" class="mono">
                  {addr}
                </th>
                <td>
                  <select
                    class="select"
                    aria-label={t('mig.map.member_for', { address: addr })}
                    value={person ?? ''}
                    onChange={(e) => setTeam({ ...team, [addr]: e.currentTarget.value || null })}
                  >
                    <option value="">{t('mig.map.original_name')}</option>
                    {members.value.map((mem) => (
                      <option key={mem.person_id} value={mem.person_id}>
                        {mem.person_id === me.value?.person.id ? `${mem.name ?? mem.email} (${t('conv.you')})` : (mem.name ?? mem.email)}
                      </option>
                    ))}
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="mig-inline">
          <input
            class="input"
            type="email"
            aria-label={t('mig.map.add_address')}
            placeholder={t('mig.map.add_address')}
            value={extra}
            onInput={(e) => setExtra(e.currentTarget.value)}
          />
          <button
            class="btn"
            type="button"
            disabled={!extra.includes('@')}
            onClick={() => {
              setTeam({ ...team, [extra.trim().toLowerCase()]: null });
              setExtra('');
            }}
          >
            {t('mig.map.add')}
          </button>
        </div>
      </fieldset>
      {chosenFolders.length > 0 && (
        <fieldset class="field mig-box">
          <legend>{st('mig.map.labels')}</legend>
          <span class="hint">{st('mig.map.labels_hint')}</span>
          <table class="table mig-map-table">
            <tbody>
              {chosenFolders.map((f) => (
                <tr key={f}>
                  <th scope="row" class="mono">
                    {f}
                  </th>
                  <td>
                    <input
                      class="input"
                      maxLength={100}
                      aria-label={t('mig.map.label_for', { folder: f })}
                      placeholder={summary?.folders.find((x) => x.path === f)?.label ?? t('mig.map.label_default')}
                      value={labels[f] ?? ''}
                      onInput={(e) => setLabels({ ...labels, [f]: e.currentTarget.value })}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </fieldset>
      )}
      <div class="field">
        <label for="mig-close">{t('mig.map.close_after')}</label>
        <input
          id="mig-close"
          class="input"
          type="number"
          min={0}
          max={3650}
          style={{ maxWidth: '140px' }}
          value={closeAfter}
          aria-describedby="mig-close-hint"
          onInput={(e) => setCloseAfter(e.currentTarget.value)}
        />
        <span class="hint" id="mig-close-hint">
          {t('mig.map.close_after_hint')}
        </span>
      </div>
      <label class="field mig-check">
        <input type="checkbox" checked={skipAutomatic} onChange={() => setSkipAutomatic(!skipAutomatic)} />
        {t('mig.map.skip_automatic')}
      </label>
      <label class="field mig-check">
        <input type="checkbox" checked={keepOriginals} onChange={() => setKeepOriginals(!keepOriginals)} />
        {t('mig.map.keep_originals')}
        {summary && (
          <span class="muted"> · {t('mig.map.keep_cost', { size: formatBytes(keepOriginals ? summary.estimated_bytes / 2 : summary.estimated_bytes) })}</span>
        )}
      </label>
      <FormError error={error} />
      <button class="btn btn-primary" type="submit" disabled={busy || !inboxId || !channelId}>
        {busy ? t('mig.working') : t('mig.next.review')}
      </button>
    </form>
  );
}
