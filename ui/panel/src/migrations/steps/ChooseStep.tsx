// Step 3, Choose: the folders to copy and how far back.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../../api';
import { FormError } from '../../components/FormError';
import { Loading, useLoad } from '../../components/Loading';
import type { MessageKey } from '../../i18n';
import { t } from '../../i18n';
import { type Folder, type Migration, plural, useSourceText } from '../model';

const SINCE_OPTIONS = [
  ['all', 0],
  ['1y', 365],
  ['2y', 730],
  ['5y', 1825],
] as const;

export function ChooseStep(props: { m: Migration; onChanged: (m: Migration) => void }) {
  const { m } = props;
  const st = useSourceText();
  const { route } = useLocation();
  const folders = useLoad(
    () => must(api.GET('/v1/migrations/{migrationId}/folders', { params: { path: { migrationId: m.id } } })).then((r) => r.data as unknown as Folder[]),
    [m.id],
  );
  const [picked, setPicked] = useState<string[] | null>(null);
  const [since, setSince] = useState(m.date_from ?? '');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (folders.data && picked === null) setPicked(folders.data.filter((f) => f.chosen).map((f) => f.path));
  }, [folders.data]);
  if (!m.allowed_actions.includes('folders') && m.allowed_actions.includes('update')) {
    // An export file: its folders were read with the file; every one is copied unless chosen otherwise later.
    return (
      <p>
        <a class="btn btn-primary mig-link-btn" href={`/settings/migrations/${m.id}?step=map`}>
          {t('mig.next.map')}
        </a>
      </p>
    );
  }
  if (!folders.data || picked === null) return <Loading error={folders.error} retry={folders.reload} />;
  // A help desk has no folders: one entry, every ticket, with the count the provider gives.
  const helpDesk = folders.data.some((f) => f.tickets !== undefined);
  const sinceDays = (days: number) => (days === 0 ? '' : new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10));
  async function save(e: Event) {
    e.preventDefault();
    setError(null);
    try {
      const next = await must(
        api.PATCH('/v1/migrations/{migrationId}', { params: { path: { migrationId: m.id } }, body: { folders: picked!, date_from: since || null } }),
      );
      props.onChanged(next as Migration);
      route(`/settings/migrations/${m.id}?step=map`);
    } catch (err) {
      setError(errorText(err));
    }
  }
  return (
    <form class="card" onSubmit={save}>
      <h2 style={{ marginTop: 0 }}>{t('mig.choose.title')}</h2>
      <p class="muted">{st('mig.choose.lead')}</p>
      <fieldset class="field mig-box">
        <legend>{t(helpDesk ? 'mig.choose.tickets' : 'mig.choose.folders')}</legend>
        <ul role="list" class="mig-folder-list">
          {folderOrder(folders.data).map((f) => {
            const disabled = f.never_read || !f.selectable;
            return (
              <li key={f.path} class={disabled ? 'mig-folder never' : 'mig-folder'}>
                <label>
                  <input
                    type="checkbox"
                    disabled={disabled}
                    checked={!disabled && picked.includes(f.path)}
                    onChange={() => setPicked(picked.includes(f.path) ? picked.filter((x) => x !== f.path) : [...picked, f.path])}
                  />
                  {f.tickets !== undefined ? (
                    <span>{f.tickets === null ? t('mig.choose.all_tickets') : t('mig.choose.all_tickets_n', { n: f.tickets })}</span>
                  ) : (
                    <>
                      <span class="mono">{f.path}</span>
                      <span class="muted">{f.messages === null ? '' : plural('mig.n_messages', f.messages)}</span>
                    </>
                  )}
                </label>
                {f.never_read && <span class="hint">{t('mig.choose.never_read')}</span>}
                {!f.never_read && !f.selectable && <span class="hint">{t('mig.choose.not_selectable')}</span>}
              </li>
            );
          })}
        </ul>
      </fieldset>
      <div class="field">
        <label for="mig-since">{t('mig.choose.since')}</label>
        <select
          id="mig-since"
          class="select"
          value={SINCE_OPTIONS.find(([, d]) => sinceDays(d) === since)?.[0] ?? (since ? 'custom' : 'all')}
          onChange={(e) => {
            const v = e.currentTarget.value;
            const opt = SINCE_OPTIONS.find(([k]) => k === v);
            if (opt) setSince(sinceDays(opt[1]));
          }}
        >
          {SINCE_OPTIONS.map(([k]) => (
            <option key={k} value={k}>
              {t(`mig.choose.since_${k}` as MessageKey)}
            </option>
          ))}
          {since && !SINCE_OPTIONS.some(([, d]) => sinceDays(d) === since) && <option value="custom">{since}</option>}
        </select>
      </div>
      <FormError error={error} />
      <button class="btn btn-primary" type="submit" disabled={picked.length === 0}>
        {t('mig.next.map')}
      </button>
    </form>
  );
}

/** INBOX, then Sent, then the rest alphabetically; folders never read (spam, trash, drafts) last. */
export function folderOrder(folders: Folder[]): Folder[] {
  const rank = (f: Folder) => (f.never_read ? 3 : f.path.toUpperCase() === 'INBOX' ? 0 : f.special_use === '\\Sent' ? 1 : 2);
  return [...folders].sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
}
