// The contacts list: search (name, address, external id, attribute), a filter on open conversations,
// newest first, more on demand. Each name opens the contact's page.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, must, type Schemas } from '../api';
import { DataTable } from '../components/DataTable';
import { FormError } from '../components/FormError';
import { Loading } from '../components/Loading';
import { calendarDay, t } from '../i18n';
import { toast } from '../state';
import { ImportDialog } from './ImportDialog';

type Contact = Schemas['Contact'];
type OpenFilter = '' | 'true' | 'false';
const PAGE = 50;

export function ContactsPage() {
  const params = new URLSearchParams(location.search);
  const [q, setQ] = useState(params.get('q') ?? '');
  const [open, setOpen] = useState<OpenFilter>((params.get('open') as OpenFilter) ?? '');
  const [rows, setRows] = useState<Contact[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [importing, setImporting] = useState(false);
  const [segmentName, setSegmentName] = useState<string | null>(null);

  const filters = () => ({ ...(q.trim() ? { q: q.trim() } : {}), ...(open ? { has_open: open } : {}) });
  async function saveSegment(e: Event) {
    e.preventDefault();
    const name = segmentName?.trim();
    if (!name) return;
    setError(null);
    try {
      const f = filters();
      await must(
        api.POST('/v1/segments', { body: { name, filter: { ...(f.q ? { q: f.q } : {}), ...(f.has_open ? { has_open: f.has_open === 'true' } : {}) } } }),
      );
      toast(t('segment.saved', { name }));
      setSegmentName(null);
    } catch (err) {
      setError(errorText(err));
    }
  }

  const query = (cursor?: string) => ({
    limit: PAGE,
    ...(q.trim() ? { q: q.trim() } : {}),
    ...(open ? { has_open: open } : {}),
    ...(cursor ? { cursor } : {}),
  });

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
      if (q.trim()) search.set('q', q.trim());
      if (open) search.set('open', open);
      history.replaceState(history.state, '', `/contacts${search.size ? `?${search}` : ''}`);
      void load();
    }, 200);
    return () => clearTimeout(timer);
  }, [q, open]);

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
          <button class="btn btn-ghost" type="button" onClick={() => setSegmentName('')} aria-expanded={segmentName !== null}>
            {t('segment.save')}
          </button>
        </div>
      </div>
      {segmentName !== null && (
        <form class="card contacts-segment" onSubmit={(e) => void saveSegment(e)}>
          <div class="field">
            <label for="segment-name">{t('segment.name')}</label>
            <input id="segment-name" class="input" value={segmentName} maxLength={100} required onInput={(e) => setSegmentName(e.currentTarget.value)} />
          </div>
          <button class="btn btn-primary" type="submit">
            {t('segment.save')}
          </button>
          <button class="btn btn-ghost" type="button" onClick={() => setSegmentName(null)}>
            {t('segment.cancel')}
          </button>
        </form>
      )}
      {importing && <ImportDialog onClose={() => setImporting(false)} onDone={() => void load()} />}
      <form class="card contacts-filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
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
      </form>
      {!rows ? (
        <Loading error={error} retry={() => void load()} />
      ) : (
        <>
          <p class="muted" role="status">
            {rows.length === 0 ? t('contacts.none') : next ? t('contacts.shown_more', { count: rows.length }) : t('contacts.shown', { count: rows.length })}
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
