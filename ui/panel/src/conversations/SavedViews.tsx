// The sidebar's saved views (issue 37): shared ones first, then the member's own, with live counts.
// Alt+↑ / Alt+↓ on a view moves it within its group; the pencil opens the view's dialog.

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, errorText, must } from '../api';
import { CustomFieldKey, CustomFieldValueInput, conversationFields } from '../automation';
import { Dialog } from '../components/Dialog';
import { loadCustomFields } from '../custom-fields';
import { t } from '../i18n';
import { overview, workspaceId } from '../state';
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

const STATUSES = ['open', 'pending', 'closed'] as const;
const PRIORITIES = ['urgent', 'high', 'medium', 'low', 'none'] as const;

/** Make (from the list's filter) or change a view: name, conditions, sort, shared. */
export function ViewDialog(props: { view?: SavedView; initial?: { filters: ViewFilter; sort: SavedView['sort'] }; onClose: () => void }) {
  const v = props.view;
  const { route } = useLocation();
  const start = v ? { filters: v.filters, sort: v.sort } : props.initial!;
  const [name, setName] = useState(v?.name ?? '');
  const [filters, setFilters] = useState<ViewFilter>(start.filters);
  const [sort, setSort] = useState(start.sort);
  const [shared, setShared] = useState(v?.shared ?? false);
  const [labels, setLabels] = useState((start.filters.label?.any ?? start.filters.label?.all ?? []).join(', '));
  const [labelMode, setLabelMode] = useState<'any' | 'all' | 'none'>(start.filters.label?.all ? 'all' : start.filters.label?.none ? 'none' : 'any');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const toggle = <K extends 'status' | 'priority'>(key: K, value: string) =>
    setFilters((old) => {
      const list = new Set((old[key] ?? []) as string[]);
      if (list.has(value)) list.delete(value);
      else list.add(value);
      const next = { ...old, [key]: [...list] };
      if (!list.size) delete next[key];
      return next;
    });
  const set = (patch: Partial<ViewFilter>) =>
    setFilters((old) => {
      const next = { ...old, ...patch };
      for (const k of Object.keys(patch) as (keyof ViewFilter)[]) if (patch[k] === undefined) delete next[k];
      return next;
    });
  const [firstField, ...otherFields] = filters.custom_fields ?? [];
  useEffect(() => void loadCustomFields(), []);
  const assignee = filters.assignee_id?.[0] === 'me' ? 'me' : filters.assignee_id?.[0] === 'none' ? 'none' : filters.assignee_id ? 'keep' : '';

  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError('');
    const list = labels
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const fields = filters.custom_fields?.filter((c) => c.value !== '');
    const body = {
      name,
      sort,
      filters: { ...filters, label: list.length ? { [labelMode]: list } : undefined, custom_fields: fields?.length ? fields : undefined },
      ...(managesSharedViews() ? { shared } : {}),
    };
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
        <fieldset class="field">
          <legend>{t('details.status')}</legend>
          <div class="check-row-group">
            {STATUSES.map((s) => (
              <label key={s} class="check-row">
                <input type="checkbox" checked={filters.status?.includes(s) ?? false} onChange={() => toggle('status', s)} />
                {t(`status.${s}`)}
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset class="field">
          <legend>{t('sv.priority')}</legend>
          <div class="check-row-group">
            {PRIORITIES.map((p) => (
              <label key={p} class="check-row">
                <input type="checkbox" checked={filters.priority?.includes(p) ?? false} onChange={() => toggle('priority', p)} />
                {t(`sv.priority_${p}`)}
              </label>
            ))}
          </div>
        </fieldset>
        <label class="field">
          <span>{t('sv.assignee')}</span>
          <select
            class="input"
            value={assignee}
            onChange={(e) => {
              const a = e.currentTarget.value;
              if (a !== 'keep') set({ assignee_id: a ? [a] : undefined });
            }}
          >
            <option value="">{t('sv.anyone')}</option>
            <option value="me">{t('nav.mine')}</option>
            <option value="none">{t('nav.unassigned')}</option>
            {assignee === 'keep' && <option value="keep">{t('sv.chosen')}</option>}
          </select>
        </label>
        <div class="field-row">
          <label class="field">
            <span>{t('sv.labels')}</span>
            <input class="input" value={labels} placeholder="billing, vip" onInput={(e) => setLabels(e.currentTarget.value)} />
          </label>
          <label class="field">
            <span>{t('sv.label_mode')}</span>
            <select class="input" value={labelMode} onChange={(e) => setLabelMode(e.currentTarget.value as 'any')}>
              <option value="any">{t('sv.label_any')}</option>
              <option value="all">{t('sv.label_all')}</option>
              <option value="none">{t('sv.label_none')}</option>
            </select>
          </label>
        </div>
        <div class="field-row">
          <label class="field">
            <span>{t('sv.sla')}</span>
            <select class="input" value={filters.sla ?? ''} onChange={(e) => set({ sla: (e.currentTarget.value || undefined) as ViewFilter['sla'] })}>
              <option value="">{t('sv.anyone')}</option>
              <option value="breached">{t('sv.sla_breached')}</option>
              <option value="running">{t('sv.sla_running')}</option>
              <option value="none">{t('sv.sla_none')}</option>
            </select>
          </label>
          <label class="field">
            <span>{t('list.sort')}</span>
            <select class="input" value={sort} onChange={(e) => setSort(e.currentTarget.value as SavedView['sort'])}>
              <option value="activity">{t('list.sort_activity')}</option>
              <option value="sla_due">{t('list.sort_due')}</option>
              <option value="created">{t('sv.sort_created')}</option>
            </select>
          </label>
        </div>
        <label class="field">
          <span>{t('sv.text')}</span>
          <input class="input" value={filters.text ?? ''} maxLength={200} onInput={(e) => set({ text: e.currentTarget.value || undefined })} />
        </label>
        {conversationFields().length > 0 && (
          // One custom field condition here (the API takes up to 20; others a view has are kept).
          <div class="field-row">
            <CustomFieldKey
              id="view-cf-key"
              label={t('sv.custom_field')}
              value={firstField?.key ?? ''}
              onChange={(key) => set({ custom_fields: key ? [{ key, value: '' }, ...otherFields] : otherFields.length ? otherFields : undefined })}
            />
            {firstField?.key && (
              <CustomFieldValueInput
                id="view-cf-value"
                fieldKey={firstField.key}
                value={firstField.value}
                onChange={(value) => set({ custom_fields: [{ key: firstField.key, value }, ...otherFields] })}
              />
            )}
          </div>
        )}
        {managesSharedViews() && (
          <label class="check-row">
            <input type="checkbox" checked={shared} onChange={(e) => setShared(e.currentTarget.checked)} />
            {t('sv.shared_with_workspace')}
          </label>
        )}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
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
