// Saved views (issue 37): the member's views and their live counts, and a view's filter built from
// the list's current one ("Save as view").
import { signal } from '@preact/signals';
import { api, must, type Schemas } from '../api';
import { me, workspaceId } from '../state';
import type { ListFilter } from './views';

export type SavedView = Schemas['SavedView'];
export type ViewFilter = Schemas['ViewFilter'];

export const savedViews = signal<SavedView[]>([]);
export const viewCounts = signal<Record<string, number>>({});

export async function loadSavedViews(): Promise<void> {
  savedViews.value = (await must(api.GET('/v1/views'))).data;
  await refreshViewCounts(true);
}

let countsTimer: ReturnType<typeof setTimeout> | undefined;
/** Like the sidebar's unread counts: calls within a second fold into one request. */
export function refreshViewCounts(now = false): Promise<void> {
  clearTimeout(countsTimer);
  return new Promise((resolve) => {
    countsTimer = setTimeout(
      async () => {
        const r = await api.GET('/v1/views/counts');
        if (r.data) viewCounts.value = Object.fromEntries(r.data.data.map((c) => [c.id, c.count]));
        resolve();
      },
      now ? 0 : 1000,
    );
  });
}

/** Whether the member may make and change shared views (owners and admins). */
export function managesSharedViews(): boolean {
  const role = me.value?.memberships.find((m) => m.workspace_id === workspaceId.value)?.role;
  return role === 'owner' || role === 'admin';
}

/** The list's current filter as a view's filter and sort. */
export function filterOfList(f: ListFilter): { filters: ViewFilter; sort: SavedView['sort'] } {
  const filters: ViewFilter = {};
  if (f.status === 'snoozed') filters.snoozed = true;
  else filters.status = [f.status];
  if (f.inbox) filters.inbox_id = [f.inbox];
  if (f.label) filters.label = { all: [f.label] };
  if (f.team) filters.team_id = [f.team];
  if (f.view === 'mine') filters.assignee_id = ['me'];
  if (f.view === 'unassigned') filters.assignee_id = ['none'];
  return { filters, sort: f.sort === 'due' ? 'sla_due' : 'activity' };
}

/** Moves a view one place up or down within its group (shared ones, or the member's own). */
export async function moveView(id: string, by: -1 | 1): Promise<boolean> {
  const all = savedViews.value;
  const view = all.find((v) => v.id === id);
  if (!view) return false;
  const group = all.filter((v) => v.shared === view.shared);
  const at = group.indexOf(view);
  const to = at + by;
  if (to < 0 || to >= group.length) return false;
  const next = [...group];
  next.splice(at, 1);
  next.splice(to, 0, view);
  const others = all.filter((v) => v.shared !== view.shared);
  savedViews.value = view.shared ? [...next, ...others] : [...others, ...next];
  try {
    await must(api.PATCH('/v1/views/{viewId}', { params: { path: { viewId: id } }, body: { position: to } }));
  } catch (e) {
    savedViews.value = all;
    throw e;
  }
  return true;
}
