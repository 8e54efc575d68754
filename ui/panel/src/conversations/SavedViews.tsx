// The sidebar's saved views (issue 37): shared ones first, then the member's own, with live counts.
// Alt+↑ / Alt+↓ on a view moves it within its group; the pencil opens the view's dialog.

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../api';
import { Dialog } from '../components/Dialog';
import { FormError } from '../components/FormError';
import { loadCustomFields } from '../custom-fields';
import { t } from '../i18n';
import { overview, workspaceId } from '../state';
import { loadTeams } from '../teams';
import {
  filterOfList,
  loadSavedViews,
  managesSharedViews,
  moveView,
  refreshViewCounts,
  type SavedView,
  savedViews,
  type ViewFilter,
  viewCounts,
} from './saved-views';
import { ViewConditions } from './ViewConditions';
import { describeFilter, describeRow, filterOfRows, type Row, rowsOf } from './view-conditions';
import { type ListFilter, listUrl } from './views';

export function SavedViewsNav(props: { filter: ListFilter; onNavigate: () => void }) {
  const f = props.filter;
  const [editing, setEditing] = useState<SavedView | null>(null);
  const [error, setError] = useState('');
  useEffect(() => void loadSavedViews().catch(() => {}), [workspaceId.value]);
  // Counts follow the same realtime events as the unread counts (each refreshes the overview).
  useEffect(() => void refreshViewCounts().catch(() => {}), [overview.value]);
  if (savedViews.value.length === 0) return null;
  const onKey = async (e: KeyboardEvent, v: SavedView) => {
    if (!e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return;
    e.preventDefault();
    try {
      if (await moveView(v.id, e.key === 'ArrowUp' ? -1 : 1)) {
        setError(t('sv.moved', { name: v.name }));
        requestAnimationFrame(() => document.getElementById(`sv-${v.id}`)?.focus());
      }
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <>
      <div class="nav-section" id="nav-saved">
        {t('sv.nav')}
      </div>
      <ul role="list" aria-labelledby="nav-saved" aria-describedby="sv-hint" class="saved-views">
        {savedViews.value.map((v) => (
          <li key={v.id} class="saved-view">
            <a
              id={`sv-${v.id}`}
              class="nav-link"
              href={listUrl({ ...f, saved: v.id })}
              aria-current={f.saved === v.id ? 'page' : undefined}
              onClick={props.onNavigate}
              onKeyDown={(e) => void onKey(e, v)}
              title={v.editable ? t('sv.reorder_hint') : undefined}
            >
              <span class="saved-view-name">{v.name}</span>
              {v.shared && <span class="visually-hidden"> ({t('sv.shared')})</span>}
              <span class="count" data-count={viewCounts.value[v.id] ?? 0}>
                {viewCounts.value[v.id] ?? '…'}
                <span class="visually-hidden"> {t('sv.conversations')}</span>
              </span>
            </a>
            {v.editable && (
              <button
                type="button"
                class="btn btn-ghost btn-icon saved-view-edit"
                aria-label={t('sv.edit_named', { name: v.name })}
                onClick={() => setEditing(v)}
              >
                ✎
              </button>
            )}
          </li>
        ))}
      </ul>
      <p id="sv-hint" class="visually-hidden">
        {t('sv.reorder_hint')}
      </p>
      <p class="visually-hidden" role="status">
        {error}
      </p>
      {editing && <ViewDialog view={editing} onClose={() => setEditing(null)} />}
    </>
  );
}

/** Make (from the list's filter) or change a view: name, its conditions (a builder), a summary of them, sort, shared. */
export function ViewDialog(props: { view?: SavedView; initial?: { filters: ViewFilter; sort: SavedView['sort'] }; onClose: () => void }) {
  const v = props.view;
  const { route } = useLocation();
  const start = v ? { filters: v.filters, sort: v.sort } : props.initial!;
  const [name, setName] = useState(v?.name ?? '');
  const [rows, setRows] = useState<Row[]>(() => rowsOf(start.filters));
  const [sort, setSort] = useState(start.sort);
  const [shared, setShared] = useState(v?.shared ?? false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  useEffect(() => {
    void loadCustomFields();
    void loadTeams();
  }, []);
  const summary = rows.map(describeRow).filter(Boolean);

  async function save(e: Event) {
    e.preventDefault();
    const built = filterOfRows(rows);
    if ('incomplete' in built) {
      setError(t('sv.incomplete', { n: built.incomplete }));
      requestAnimationFrame(() => document.getElementById(`vc-${built.incomplete - 1}-kind`)?.focus());
      return;
    }
    setBusy(true);
    setError('');
    const body = { name, sort, filters: built.filter, ...(managesSharedViews() ? { shared } : {}) };
    try {
      const saved = v ? await must(api.PATCH('/v1/views/{viewId}', { params: { path: { viewId: v.id } }, body })) : await must(api.POST('/v1/views', { body }));
      await loadSavedViews();
      props.onClose();
      if (!v) route(listUrl({ view: 'all', status: 'open', inbox: null, label: null, saved: saved.id }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setBusy(true);
    try {
      await must(api.DELETE('/v1/views/{viewId}', { params: { path: { viewId: v!.id } } }));
      await loadSavedViews();
      props.onClose();
      if (new URLSearchParams(location.search).get('saved') === v!.id) route('/conversations');
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  }

  return (
    <Dialog title={v ? t('sv.edit') : t('sv.save_as')} onClose={props.onClose} closeButton={false}>
      <form class="view-form" onSubmit={save}>
        <label class="field">
          <span>{t('sv.name')}</span>
          <input class="input" required maxLength={80} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <section class="view-summary" aria-labelledby="view-summary-title">
          <h3 id="view-summary-title" class="view-conditions-title">
            {t('sv.summary')}
          </h3>
          {summary.length ? (
            <ul class="view-summary-list">
              {summary.map((s, i) => (
                <li key={i}>{s}</li>
              ))}
            </ul>
          ) : (
            <p class="muted">{t('sv.every_conversation')}</p>
          )}
        </section>
        <ViewConditions
          rows={rows}
          onChange={(next) => {
            setRows(next);
            setError('');
          }}
        />
        <label class="field view-sort">
          <span>{t('list.sort')}</span>
          <select class="input" value={sort} onChange={(e) => setSort(e.currentTarget.value as SavedView['sort'])}>
            <option value="activity">{t('list.sort_activity')}</option>
            <option value="sla_due">{t('list.sort_due')}</option>
            <option value="created">{t('sv.sort_created')}</option>
          </select>
        </label>
        {managesSharedViews() && (
          <label class="check-row">
            <input type="checkbox" checked={shared} onChange={(e) => setShared(e.currentTarget.checked)} />
            {t('sv.shared_with_workspace')}
          </label>
        )}
        <FormError error={error} />
        <div class="dialog-actions">
          {v && (
            <button type="button" class="btn btn-danger" disabled={busy} onClick={() => (confirmDelete ? void remove() : setConfirmDelete(true))}>
              {confirmDelete ? t('sv.delete_confirm', { name: v.name }) : t('sv.delete')}
            </button>
          )}
          <button type="button" class="btn" onClick={props.onClose}>
            {t('sv.cancel')}
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {t('sv.save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** "Save as view": the list's current filter, named (and shared by owners and admins). */
export function SaveAsView(props: { filter: ListFilter }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" class="btn btn-ghost save-as-view" onClick={() => setOpen(true)}>
        {t('sv.save_as')}
      </button>
      {open && <ViewDialog initial={filterOfList(props.filter)} onClose={() => setOpen(false)} />}
    </>
  );
}

/** Above a saved view's list: what it shows, in words, on one line (all of it in the tooltip). */
export function ViewSummaryLine(props: { viewId: string }) {
  const v = savedViews.value.find((x) => x.id === props.viewId);
  useEffect(() => {
    void loadCustomFields();
    void loadTeams();
  }, []);
  if (!v) return null;
  const parts = describeFilter(v.filters);
  const text = parts.length ? parts.join(' · ') : t('sv.every_conversation');
  return (
    <p class="view-summary-line" title={text}>
      {text}
    </p>
  );
}
