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
}

export function filterFromUrl(query: Record<string, string>, params: Record<string, string | undefined>): ListFilter {
  const view = (['mine', 'unassigned', 'all'] as const).find((v) => v === query.view) ?? 'all';
  const status = (['open', 'pending', 'closed', 'snoozed'] as const).find((s) => s === query.status) ?? 'open';
  return { view, status, inbox: params.inbox ?? null, label: query.label || null, team: query.team || null };
}

/** The URL of a list (and optionally one conversation in it). */
export function listUrl(f: ListFilter, conversationId?: string | null): string {
  const base = f.inbox ? `/inboxes/${encodeURIComponent(f.inbox)}` : '/conversations';
  const path = conversationId ? (f.inbox ? `${base}/${conversationId}` : `${base}/${conversationId}`) : base;
  const q = new URLSearchParams();
  if (f.view !== 'all') q.set('view', f.view);
  if (f.status !== 'open') q.set('status', f.status);
  if (f.label) q.set('label', f.label);
  if (f.team) q.set('team', f.team);
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
