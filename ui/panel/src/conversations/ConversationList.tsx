// The conversation list: latest activity first, loaded by cursor as the person scrolls, rendered
// as a window of rows (smooth at tens of thousands), kept current by the realtime stream.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type BodyOf, type ConversationListItem, errorText, must } from '../api';
import { MacroBulkButton } from '../automation';
import { InboxOptions } from '../components/InboxOptions';
import { absoluteTime, conversationTitle, locale, relativeTime, t } from '../i18n';
import { isSignal, onEvent, onReset } from '../realtime';
import { SlaClock } from '../sla';
import { wakeText } from '../snooze';
import { inboxes, me, memberName, overview, toast } from '../state';
import { myTeamIds, teamName } from '../teams';
import { SaveAsView, ViewSummaryLine } from './SavedViews';
import { SearchBox, SearchResults } from './Search';
import { savedViews } from './saved-views';
import { isTyping } from './typing';
import { comesBefore, type ListFilter, type ListSort, listUrl, matches } from './views';

const ROW_HEIGHT = 76;
const OVERSCAN = 8;
const PAGE = 100;

type Item = ConversationListItem;

export function ConversationList(props: { filter: ListFilter; selectedId: string | null; onMenu: () => void; onNew: () => void }) {
  const f = props.filter;
  const { route } = useLocation();
  const [items, setItems] = useState<Item[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'error'>('loading');
  const [error, setError] = useState('');
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const [q, setQ] = useState('');
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const toggleChecked = (id: string) =>
    setChecked((old) => {
      const next = new Set(old);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const scroller = useRef<HTMLDivElement>(null);
  const loadingMore = useRef(false);
  const shift = useRef(0);
  const myId = me.value!.person.id;

  const query = () =>
    f.saved
      ? { view: f.saved, limit: PAGE }
      : {
          sort: f.sort === 'due' && f.status !== 'closed' ? ('sla_due' as const) : ('activity' as const),
          limit: PAGE,
          ...(f.status === 'snoozed' ? { snoozed: 'true' as const } : { status: f.status }),
          ...(f.inbox ? { inbox_id: f.inbox } : {}),
          ...(f.label ? { label: f.label } : {}),
          ...(f.team ? { team_id: f.team } : {}),
          ...(f.view === 'mine' ? { assignee_id: myId } : f.view === 'unassigned' ? { assignee_id: 'none' } : {}),
          spam: 'false' as const,
        };

  async function loadFirst() {
    setState('loading');
    try {
      const page = await must(api.GET('/v1/conversations', { params: { query: query() } }));
      setItems(page.data);
      setCursor(page.next_cursor);
      setState('ready');
      scroller.current?.scrollTo({ top: 0 });
    } catch (e) {
      setError(errorText(e));
      setState('error');
    }
  }

  async function loadMore() {
    if (!cursor || loadingMore.current) return;
    loadingMore.current = true;
    try {
      const page = await must(api.GET('/v1/conversations', { params: { query: { ...query(), cursor } } }));
      setItems((old) => {
        const seen = new Set(old.map((x) => x.id));
        return [...old, ...page.data.filter((x) => !seen.has(x.id))];
      });
      setCursor(page.next_cursor);
    } finally {
      loadingMore.current = false;
    }
  }

  useEffect(() => {
    setChecked(new Set());
    void loadFirst();
  }, [f.view, f.status, f.inbox, f.label, f.team, f.sort, f.saved, f.saved && savedViews.value.find((v) => v.id === f.saved)?.updated_at]);

  // Live updates: merge what the events carry; rows added above keep the reader's place.
  useEffect(() => {
    const off = onEvent((ev) => {
      // A new conversation whose only message was taken back (undo send): gone.
      if (ev.type === 'conversation.removed') return setItems((old) => old.filter((x) => x.id !== ev.data.conversation_id));
      const conv = ev.data.conversation;
      if (!conv || ev.type === 'message.updated' || isSignal(ev)) return;
      setItems((old) => {
        const index = old.findIndex((x) => x.id === conv.id);
        const prev = index >= 0 ? old[index] : null;
        const message = ev.type === 'message.created' || ev.type === 'feedback.created' ? ev.data.message : null;
        const contact = ev.data.contact;
        const next: Item = {
          ...(prev ?? { preview: null, unread: false }),
          ...conv,
          contact: contact
            ? { id: contact.id, name: contact.name ?? null, email: contact.emails?.[0] ?? null }
            : (prev?.contact ?? { id: conv.contact_id, name: null, email: null }),
          preview: message && message.kind === 'message' ? String(message.body).replace(/\s+/g, ' ').trim().slice(0, 200) : (prev?.preview ?? null),
          unread:
            message && message.kind === 'message' && message.direction === 'in'
              ? conv.id !== props.selectedId
              : (prev?.unread ?? ev.type === 'conversation.created'),
        } as Item;
        const rest = old.filter((x) => x.id !== conv.id);
        // A saved view's rows are updated in place; new ones come with the next load (its count is live).
        if (f.saved ? !prev : !matches(next, f, myId, myTeamIds())) return f.saved ? old : rest;
        const at = rest.findIndex((x) => comesBefore(next, x, f.status === 'closed' ? 'activity' : f.sort));
        const pos = at === -1 ? rest.length : at;
        if (pos === rest.length && cursor) return rest; // belongs past what is loaded
        const firstVisible = Math.floor((scroller.current?.scrollTop ?? 0) / ROW_HEIGHT);
        if ((scroller.current?.scrollTop ?? 0) > 0) {
          if (pos < firstVisible && index === -1) shift.current += 1;
          if (index >= 0 && index < firstVisible && pos >= firstVisible) shift.current -= 1;
        }
        return [...rest.slice(0, pos), next, ...rest.slice(pos)];
      });
    });
    const offReset = onReset(() => void loadFirst());
    return () => {
      off();
      offReset();
    };
  }, [f.view, f.status, f.inbox, f.label, f.team, f.sort, props.selectedId, cursor]);

  useLayoutEffect(() => {
    if (shift.current && scroller.current) {
      scroller.current.scrollTop += shift.current * ROW_HEIGHT;
      shift.current = 0;
    }
  }, [items]);

  // The open conversation is read.
  useEffect(() => {
    if (props.selectedId) setItems((old) => old.map((x) => (x.id === props.selectedId && x.unread ? { ...x, unread: false } : x)));
  }, [props.selectedId]);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight || 600);
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // j / k move through the list.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target) || q.trim()) return;
      if (e.key === 'x' && props.selectedId) {
        e.preventDefault();
        toggleChecked(props.selectedId);
        return;
      }
      if (e.key !== 'j' && e.key !== 'k') return;
      e.preventDefault();
      const i = items.findIndex((x) => x.id === props.selectedId);
      const next = e.key === 'j' ? Math.min(items.length - 1, i + 1) : Math.max(0, i === -1 ? 0 : i - 1);
      const target = items[next];
      if (!target) return;
      route(listUrl(f, target.id));
      const el = scroller.current;
      if (el) {
        const top = next * ROW_HEIGHT;
        if (top < el.scrollTop) el.scrollTop = top;
        else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_HEIGHT - el.clientHeight;
      }
      if (next > items.length - 20) void loadMore();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [items, props.selectedId, f, cursor, q]);

  function onScroll(e: Event) {
    const el = e.currentTarget as HTMLDivElement;
    setScrollTop(el.scrollTop);
    if (el.scrollTop + el.clientHeight > items.length * ROW_HEIGHT - 10 * ROW_HEIGHT) void loadMore();
  }

  const title = f.saved
    ? (savedViews.value.find((v) => v.id === f.saved)?.name ?? '')
    : f.label
      ? f.label
      : f.team
        ? f.team === 'mine'
          ? t('teams.mine')
          : teamName(f.team, t('teams.nav'))
        : f.inbox
          ? (inboxes.value.find((x) => x.id === f.inbox)?.name ?? '')
          : t(f.view === 'mine' ? 'nav.mine' : f.view === 'unassigned' ? 'nav.unassigned' : 'nav.all');
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);

  return (
    <section class="list-pane" aria-label={title}>
      <div class="pane-head">
        <button class="btn btn-ghost back" type="button" onClick={props.onMenu} aria-label={t('nav.menu')}>
          ☰
        </button>
        <h1>{title}</h1>
        <a
          class="btn btn-ghost list-csv"
          href={`/v1/conversations/export.csv?${new URLSearchParams(Object.entries(query()).flatMap(([k, v]) => (k === 'limit' ? [] : [[k, String(v)]])))}`}
          download
          title={t('list.export_csv')}
          aria-label={t('list.export_csv')}
        >
          CSV
        </a>
        <button class="btn btn-primary new-conversation" type="button" onClick={props.onNew} title={`${t('compose.new')} (c)`}>
          {t('compose.new')}
        </button>
      </div>
      <ImportBanner inbox={f.inbox} />
      <SearchBox value={q} onChange={setQ} />
      {q.trim() ? (
        <div class="list-scroll">
          <SearchResults q={q.trim()} filter={f} selectedId={props.selectedId} />
        </div>
      ) : (
        <>
          {f.saved && <ViewSummaryLine viewId={f.saved} />}
          <div class="filters" role="group" aria-label={t('details.status')} hidden={!!f.saved}>
            {(['open', 'pending', 'closed', 'snoozed'] as const).map((s) => (
              <button key={s} class="chip" type="button" aria-pressed={f.status === s} onClick={() => route(listUrl({ ...f, status: s }))}>
                {s === 'snoozed' ? t('snooze.view') : t(`status.${s}`)}
              </button>
            ))}
            {f.status !== 'closed' && (
              <select
                class="input list-sort"
                aria-label={t('list.sort')}
                value={f.sort ?? 'activity'}
                onChange={(e) => route(listUrl({ ...f, sort: e.currentTarget.value as ListSort }))}
              >
                <option value="activity">{t('list.sort_activity')}</option>
                <option value="due">{t('list.sort_due')}</option>
              </select>
            )}
            <SaveAsView filter={f} />
          </div>
          {checked.size > 0 && (
            <BulkBar
              ids={[...checked]}
              onDone={(updated) => {
                setChecked(new Set());
                setItems((old) =>
                  old.map((x) => (updated.has(x.id) ? { ...x, ...updated.get(x.id) } : x)).filter((x) => !!f.saved || matches(x, f, myId, myTeamIds())),
                );
              }}
              onClear={() => setChecked(new Set())}
            />
          )}
          <div class="list-scroll" ref={scroller} onScroll={onScroll}>
            {state === 'loading' && (
              <div aria-busy="true" aria-label={t('list.loading')} style={{ padding: 'var(--space-3)' }}>
                {Array.from({ length: 6 }, (_, i) => (
                  <div key={i}>
                    <div class="skeleton" style={{ width: '40%' }} />
                    <div class="skeleton" style={{ width: '85%' }} />
                  </div>
                ))}
              </div>
            )}
            {state === 'error' && (
              <div class="empty" role="alert">
                <strong>{t('list.error')}</strong>
                <p>{error}</p>
                <button class="btn" type="button" onClick={() => void loadFirst()}>
                  {t('list.retry')}
                </button>
              </div>
            )}
            {state === 'ready' && items.length === 0 && (
              <div class="empty">
                <strong>{t('list.empty_title')}</strong>
                {inboxes.value.length === 0 ? (
                  <>
                    {t('list.empty_setup')} <a href="/settings/inboxes">{t('settings.inboxes')}</a>
                  </>
                ) : f.status === 'snoozed' ? (
                  t('snooze.empty')
                ) : f.status === 'open' ? (
                  t('list.empty_open')
                ) : (
                  t('list.empty_other')
                )}
              </div>
            )}
            {state === 'ready' && items.length > 0 && (
              <ul
                role="list"
                aria-label={title}
                style={{ height: `${items.length * ROW_HEIGHT}px`, position: 'relative', margin: 0, padding: 0, listStyle: 'none' }}
              >
                {items.slice(first, last).map((c, i) => (
                  <li key={c.id} class={`row-slot${checked.has(c.id) ? ' checked' : ''}`} style={{ top: `${(first + i) * ROW_HEIGHT}px` }}>
                    <label class="row-check">
                      <input
                        type="checkbox"
                        checked={checked.has(c.id)}
                        onChange={() => toggleChecked(c.id)}
                        aria-label={t('bulk.select', { name: c.subject || c.contact.name || c.contact.email || c.id })}
                      />
                    </label>
                    <Row item={c} href={listUrl(f, c.id)} selected={c.id === props.selectedId} />
                  </li>
                ))}
              </ul>
            )}
          </div>
        </>
      )}
    </section>
  );
}

function Row(props: { item: Item; href: string; selected: boolean }) {
  const c = props.item;
  const unread = c.unread && !props.selected;
  const who = c.contact.name || c.contact.email || t('list.unknown_contact');
  return (
    <a class={`row${unread ? ' unread' : ''}`} href={props.href} aria-current={props.selected ? 'true' : undefined}>
      <span class={`dot dot-${c.status}`} aria-hidden="true" />
      <span class="who">
        {who}
        {unread && <span class="visually-hidden"> ({t('list.unread')})</span>}
      </span>
      {c.snoozed_at ? (
        <span class="when snooze-when" title={c.snoozed_until === 'customer_reply' ? t('snooze.badge_reply') : absoluteTime(c.snoozed_until ?? c.snoozed_at)}>
          {c.snoozed_until === 'customer_reply' || !c.snoozed_until ? t('snooze.view') : wakeText(c.snoozed_until, locale.value)}
        </span>
      ) : (
        <time class="when" dateTime={c.last_message_at} title={absoluteTime(c.last_message_at)}>
          {relativeTime(c.last_message_at)}
        </time>
      )}
      <span class={`subject${c.subject ? '' : ' muted'}`}>{conversationTitle(c)}</span>
      <RowTags item={c} />
      <span class="snippet">{c.preview ?? ''}</span>
    </a>
  );
}

/** Beside the subject: the priority (when set), the first labels and whom it is assigned to. */
function RowTags(props: { item: Item }) {
  const c = props.item;
  const assignee = c.assignee_id ? memberName(c.assignee_id, t('conv.you'), t('conv.team')) : null;
  if (!c.priority && !c.labels.length && !assignee && !c.sla) return null;
  return (
    <span class="row-tags">
      {c.status !== 'closed' && <SlaClock sla={c.sla} />}
      {c.priority && <span class={`badge priority-${c.priority}`}>{t(`priority.${c.priority}`)}</span>}
      {c.labels.slice(0, 2).map((l) => (
        <span key={l} class="badge label-badge">
          {l}
        </span>
      ))}
      {c.labels.length > 2 && <span class="badge">+{c.labels.length - 2}</span>}
      {assignee && (
        <span class="row-assignee" title={t('list.assigned_to', { name: assignee })}>
          <span aria-hidden="true">{assignee.slice(0, 1).toLocaleUpperCase()}</span>
          <span class="visually-hidden">{t('list.assigned_to', { name: assignee })}</span>
        </span>
      )}
    </span>
  );
}

/** Actions on the selected conversations: one bulk update (one conversation.updated each). */
function BulkBar(props: { ids: string[]; onDone: (updated: Map<string, Partial<Item>>) => void; onClear: () => void }) {
  const myId = me.value!.person.id;
  const [busy, setBusy] = useState(false);
  async function apply(changes: BodyOf<'/v1/conversations/bulk-update', 'post'>['changes'], labelToAdd?: string) {
    setBusy(true);
    try {
      const updated = new Map<string, Partial<Item>>();
      for (let i = 0; i < props.ids.length; i += 100) {
        const ids = props.ids.slice(i, i + 100);
        if (labelToAdd) {
          // Labels replace; add to each conversation's own labels (one request per conversation).
          for (const id of ids) {
            const current = await must(api.GET('/v1/conversations/{conversationId}', { params: { path: { conversationId: id } } }));
            const next = await must(
              api.PATCH('/v1/conversations/{conversationId}', {
                params: { path: { conversationId: id } },
                body: { labels: [...new Set([...current.labels, labelToAdd])] },
              }),
            );
            updated.set(id, next);
          }
          continue;
        }
        const r = await must(api.POST('/v1/conversations/bulk-update', { body: { conversation_ids: ids, changes } }));
        for (const c of r.data) updated.set(c.id, c);
      }
      toast(t('bulk.done', { count: updated.size }));
      props.onDone(updated);
    } catch (e) {
      toast(t('action.failed', { error: errorText(e) }));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="bulk-bar" role="toolbar" aria-label={t('bulk.selected', { count: props.ids.length })}>
      <span class="count">{t('bulk.selected', { count: props.ids.length })}</span>
      <button class="btn" type="button" disabled={busy} onClick={() => void apply({ status: 'closed' })}>
        {t('bulk.close')}
      </button>
      <button class="btn" type="button" disabled={busy} onClick={() => void apply({ assignee_id: myId })}>
        {t('bulk.assign_me')}
      </button>
      <button class="btn" type="button" disabled={busy} onClick={() => void apply({ spam: true })}>
        {t('bulk.spam')}
      </button>
      <select
        class="select"
        aria-label={t('bulk.move')}
        disabled={busy}
        value=""
        onChange={(e) => {
          const v = e.currentTarget.value;
          if (v) void apply({ inbox_id: v });
        }}
      >
        <option value="">{t('bulk.move')}</option>
        <InboxOptions />
      </select>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const input = (e.currentTarget as HTMLFormElement).elements.namedItem('bulk-label') as HTMLInputElement;
          const v = input.value.trim();
          if (v) void apply({}, v).then(() => (input.value = ''));
        }}
      >
        <input
          name="bulk-label"
          class="input"
          style={{ width: '120px', minHeight: '32px' }}
          placeholder={t('bulk.label')}
          aria-label={t('bulk.label')}
          disabled={busy}
        />
      </form>
      <MacroBulkButton ids={props.ids} disabled={busy} onRan={() => props.onDone(new Map())} />
      <button class="btn btn-ghost" type="button" onClick={props.onClear}>
        {t('bulk.clear')}
      </button>
    </div>
  );
}

/** While a migration copies history into an inbox, everyone who sees the inbox is told. */
function ImportBanner(props: { inbox: string | null }) {
  const copies = (overview.value?.importing ?? []).filter((m) => !props.inbox || m.inbox_id === props.inbox);
  if (!copies.length) return null;
  return (
    <div class="banner" role="status">
      {copies.map((m) => (
        <p key={m.inbox_id} style={{ margin: 0 }}>
          {t(m.state === 'copying' ? 'import.copying' : 'import.stopped', {
            inbox: inboxes.value.find((i) => i.id === m.inbox_id)?.name ?? '',
            percent: m.percent,
          })}
        </p>
      ))}
    </div>
  );
}
