// Which conversations a list shows, read from and written to the URL.
import type { ConversationStatus } from '../state';

export type View = 'mine' | 'unassigned' | 'all';
/** A status, or the Snoozed view (snoozed conversations of any status). */
export type ListStatus = ConversationStatus | 'snoozed';
export interface ListFilter {
  view: View;
  status: ListStatus;
  inbox: string | null;
  label: string | null;
  /** A team's id, or 'mine' for the member's teams. */
  team?: string | null;
  /** 'due': the earliest SLA due time first (breached first, nothing due last); else latest activity first. */
  sort?: ListSort;
  /** A saved view's id (`?saved=`): its filter and sort, instead of the others. */
  saved?: string | null;
}
export type ListSort = 'activity' | 'due';

export function filterFromUrl(query: Record<string, string>, params: Record<string, string | undefined>): ListFilter {
  const view = (['mine', 'unassigned', 'all'] as const).find((v) => v === query.view) ?? 'all';
  const status = (['open', 'pending', 'closed', 'snoozed'] as const).find((s) => s === query.status) ?? 'open';
  const sort = query.sort === 'due' ? 'due' : 'activity';
  return { view, status, inbox: params.inbox ?? null, label: query.label || null, team: query.team || null, sort, saved: query.saved || null };
}

/** The URL of a list (and optionally one conversation in it). */
export function listUrl(f: ListFilter, conversationId?: string | null): string {
  if (f.saved) return `${conversationId ? `/conversations/${conversationId}` : '/conversations'}?saved=${encodeURIComponent(f.saved)}`;
  const base = f.inbox ? `/inboxes/${encodeURIComponent(f.inbox)}` : '/conversations';
  const path = conversationId ? (f.inbox ? `${base}/${conversationId}` : `${base}/${conversationId}`) : base;
  const q = new URLSearchParams();
  if (f.view !== 'all') q.set('view', f.view);
  if (f.status !== 'open') q.set('status', f.status);
  if (f.label) q.set('label', f.label);
  if (f.team) q.set('team', f.team);
  if (f.sort === 'due') q.set('sort', 'due');
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Does a conversation belong in this list? (Realtime updates are filtered on the client.) */
export function matches(
  c: { status: string; assignee_id: string | null; inbox_id: string; labels: string[]; spam: boolean; snoozed_at?: string | null; team_id?: string | null },
  f: ListFilter,
  me: string,
  myTeams: readonly string[] = [],
): boolean {
  if (c.spam) return false;
  // A snoozed conversation leaves the open list and shows only in the Snoozed view (as the server lists them).
  if (f.status === 'snoozed' ? !c.snoozed_at : c.status !== f.status || (f.status === 'open' && !!c.snoozed_at)) return false;
  if (f.view === 'mine' && c.assignee_id !== me) return false;
  if (f.view === 'unassigned' && c.assignee_id !== null) return false;
  if (f.inbox && c.inbox_id !== f.inbox) return false;
  if (f.label && !c.labels.includes(f.label)) return false;
  if (f.team && !(f.team === 'mine' ? !!c.team_id && myTeams.includes(c.team_id) : c.team_id === f.team)) return false;
  return true;
}

type SlaTarget = { due_at: string | null; met_at: string | null } | null;
type Sortable = { id: string; status: string; last_message_at: string; sla?: Record<string, SlaTarget> | null };

/** The server's due-first key (src/sla/engine.ts sortKey): the earliest due time of a target not yet met. */
const NOTHING_DUE = '9999-12-31T23:59:59.999Z';
export function dueKey(c: Sortable): string {
  if (!c.sla || c.status === 'closed') return NOTHING_DUE;
  let min = NOTHING_DUE;
  for (const t of Object.values(c.sla)) if (t && !t.met_at && t.due_at && t.due_at < min) min = t.due_at;
  return min;
}

/** Whether `a` comes before `b` in the list's order (the server's order, so live rows land where a reload puts them). */
export function comesBefore(a: Sortable, b: Sortable, sort: ListSort | undefined): boolean {
  if (sort === 'due') {
    const da = dueKey(a);
    const db = dueKey(b);
    return da < db || (da === db && a.id < b.id);
  }
  return a.last_message_at > b.last_message_at || (a.last_message_at === b.last_message_at && a.id > b.id);
}
