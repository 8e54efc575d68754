// The contacts list: search (name, address, external id, attribute), a filter on open conversations
// and on when contacts were added, newest first, more on demand. Each name opens the contact's page.
// Segments: the filter saved under a name; picking one sets the filters to it (kept in the URL).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { DataTable } from '../components/DataTable';
import { FormError } from '../components/FormError';
import { Loading } from '../components/Loading';
import { calendarDay, t, tCount } from '../i18n';
import { ImportDialog } from './ImportDialog';
import { SegmentBar, SegmentNameForm } from './SegmentControls';
import { afterOfDay, beforeOfDay, dayOfAfter, dayOfBefore, loadSegments, type SegmentFilter, sameFilter, segments } from './segments';

type Contact = Schemas['Contact'];
type OpenFilter = '' | 'true' | 'false';
/** Filters only a segment made through the API carries: kept and applied, shown in its words. */
type Extra = Pick<SegmentFilter, 'email' | 'inbox_id' | 'external_id'>;
const PAGE = 50;

export function ContactsPage() {
  const params = new URLSearchParams(location.search);
  const [q, setQ] = useState(params.get('q') ?? '');
  const [open, setOpen] = useState<OpenFilter>((params.get('open') as OpenFilter) ?? '');
  const [after, setAfter] = useState(params.get('created_after') ?? '');
  const [before, setBefore] = useState(params.get('created_before') ?? '');
  const [extra, setExtra] = useState<Extra>({});
  const [segmentId, setSegmentId] = useState(params.get('segment') ?? '');
  const [rows, setRows] = useState<Contact[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [importing, setImporting] = useState(false);
  const [naming, setNaming] = useState<'new' | 'rename' | null>(null);

  const filter = (): SegmentFilter => ({
    ...(q.trim() ? { q: q.trim() } : {}),
    ...(open ? { has_open: open === 'true' } : {}),
    ...(after ? { created_after: after } : {}),
    ...(before ? { created_before: before } : {}),
    ...extra,
  });
  const filters = () => {
    const { has_open, ...rest } = filter();
    return { ...rest, ...(has_open === undefined ? {} : { has_open: String(has_open) as 'true' | 'false' }) } as Record<string, string>;
  };
  const segment = segments.value.find((x) => x.id === segmentId) ?? null;
  const modified = !!segment && !sameFilter(filter(), segment.filter);

  function applySegment(id: string) {
    setSegmentId(id);
    const f: SegmentFilter = segments.value.find((x) => x.id === id)?.filter ?? {};
    setQ(f.q ?? '');
    setOpen(f.has_open === undefined ? '' : f.has_open ? 'true' : 'false');
    setAfter(f.created_after ?? '');
    setBefore(f.created_before ?? '');
    setExtra({
      ...(f.email ? { email: f.email } : {}),
      ...(f.inbox_id ? { inbox_id: f.inbox_id } : {}),
      ...(f.external_id ? { external_id: f.external_id } : {}),
    });
  }
  // Segments load once; a segment named in the URL then sets the filters it carries beyond the URL's.
  useEffect(() => {
    loadSegments()
      .then(() => {
        if (segmentId && segments.value.some((x) => x.id === segmentId)) applySegment(segmentId);
      })
      .catch((e) => setError(errorText(e)));
  }, []);

  const query = (cursor?: string) => ({ limit: PAGE, ...filters(), ...(cursor ? { cursor } : {}) });

  async function load() {
    setError(null);
    try {
      const page = await must(api.GET('/v1/contacts', { params: { query: query() } }));
      setRows(page.data);
      setNext(page.next_cursor ?? null);
    } catch (e) {
      setError(errorText(e));
    }
  }
  async function more() {
    if (!next) return;
    setLoadingMore(true);
    try {
      const page = await must(api.GET('/v1/contacts', { params: { query: query(next) } }));
      setRows((r) => [...(r ?? []), ...page.data]);
      setNext(page.next_cursor ?? null);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setLoadingMore(false);
    }
  }

  // The search runs as the team types (a short pause first) and the URL keeps it for a reload.
  useEffect(() => {
    const timer = setTimeout(() => {
      const search = new URLSearchParams();
      if (segmentId) search.set('segment', segmentId);
      if (q.trim()) search.set('q', q.trim());
      if (open) search.set('open', open);
      if (after) search.set('created_after', after);
      if (before) search.set('created_before', before);
      history.replaceState(history.state, '', `/contacts${search.size ? `?${search}` : ''}`);
      void load();
    }, 200);
    return () => clearTimeout(timer);
  }, [q, open, after, before, extra, segmentId]);

  return (
    <main class="settings-main contacts-page" id="main" tabIndex={-1}>
      <p>
        <a href="/conversations">← {t('contacts.back')}</a>
      </p>
      <div class="contacts-head">
        <h1>{t('contacts.title')}</h1>
        <div class="contacts-actions">
          <button class="btn" type="button" onClick={() => setImporting(true)}>
            {t('import.open')}
          </button>
          <a class="btn btn-ghost" href={`/v1/contacts/export.csv?${new URLSearchParams(filters())}`} download>
            {t('export.csv')}
          </a>
          <button class="btn" type="button" onClick={() => setNaming('new')} aria-expanded={naming === 'new'}>
            {t('segment.save')}
          </button>
        </div>
      </div>
      {naming && (
        <SegmentNameForm
          key={naming}
          segment={naming === 'rename' ? (segment ?? undefined) : undefined}
          filter={filter()}
          onDone={(saved) => {
            setNaming(null);
            if (saved) setSegmentId(saved.id);
          }}
        />
      )}
      {importing && <ImportDialog onClose={() => setImporting(false)} onDone={() => void load()} />}
      <form class="card contacts-filters" role="search" onSubmit={(e) => e.preventDefault()}>
        {segments.value.length > 0 && (
          <div class="field contacts-segment-pick">
            <label for="contacts-segment">{t('segment.pick')}</label>
            <select id="contacts-segment" class="select" value={segmentId} onChange={(e) => applySegment(e.currentTarget.value)}>
              <option value="">{t('segment.none')}</option>
              {segments.value.map((x) => (
                <option key={x.id} value={x.id}>
                  {x.name}
                </option>
              ))}
            </select>
          </div>
        )}
        <div class="field contacts-search">
          <label for="contacts-q">{t('contacts.search')}</label>
          <input id="contacts-q" class="input" type="search" value={q} placeholder={t('contacts.search_hint')} onInput={(e) => setQ(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="contacts-open">{t('contacts.show')}</label>
          <select id="contacts-open" class="select" value={open} onChange={(e) => setOpen(e.currentTarget.value as OpenFilter)}>
            <option value="">{t('contacts.show_all')}</option>
            <option value="true">{t('contacts.show_open')}</option>
            <option value="false">{t('contacts.show_no_open')}</option>
          </select>
        </div>
        <div class="field contacts-day">
          <label for="contacts-after">{t('contacts.added_from')}</label>
          <input id="contacts-after" class="input" type="date" value={dayOfAfter(after)} onChange={(e) => setAfter(afterOfDay(e.currentTarget.value))} />
        </div>
        <div class="field contacts-day">
          <label for="contacts-before">{t('contacts.added_to')}</label>
          <input id="contacts-before" class="input" type="date" value={dayOfBefore(before)} onChange={(e) => setBefore(beforeOfDay(e.currentTarget.value))} />
        </div>
      </form>
      {segment && (
        <SegmentBar
          key={segment.id}
          segment={segment}
          modified={modified}
          filter={filter()}
          onRename={() => setNaming('rename')}
          onDeleted={() => {
            applySegment('');
            requestAnimationFrame(() => document.getElementById('contacts-segment')?.focus());
          }}
        />
      )}
      {!rows ? (
        <Loading error={error} retry={() => void load()} />
      ) : (
        <>
          <p class="muted" role="status">
            {rows.length === 0 ? t('contacts.none') : next ? t('contacts.shown_more', { count: rows.length }) : tCount('contacts.shown', rows.length)}
          </p>
          {rows.length > 0 && (
            <DataTable label={t('contacts.title')} columns={[t('contacts.name'), t('contacts.email'), t('contacts.created')]}>
              {rows.map((c) => (
                <tr key={c.id}>
                  <th scope="row">
                    <a href={`/contacts/${c.id}`}>{c.name ?? t('details.no_name')}</a>
                  </th>
                  <td class="contacts-email">{c.emails[0] ?? c.unverified_email ?? '—'}</td>
                  <td>
                    <time dateTime={c.created_at}>{calendarDay(c.created_at.slice(0, 10))}</time>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          <FormError error={error} />
          {next && (
            <button class="btn" type="button" onClick={() => void more()} disabled={loadingMore}>
              {t('contacts.more')}
            </button>
          )}
        </>
      )}
    </main>
  );
}
