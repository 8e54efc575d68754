// What the whole panel shares: who is signed in, which workspace, its inboxes, toasts.
import { computed, signal } from '@preact/signals';
import { api, type Inbox, must, type Schemas, useWorkspace } from './api';
import { setLocale } from './i18n';

type Me = {
  person: { id: string; email: string; name: string | null; locale: string; undo_send_seconds?: number };
  memberships: { workspace_id: string; workspace_name: string; role: 'owner' | 'admin' | 'agent' }[];
};

/** undefined while the first /v1/me is in flight; null when signed out. */
export const me = signal<Me | null | undefined>(undefined);
export const workspaceId = signal<string | null>(null);
export const inboxes = signal<Inbox[]>([]);
export const members = signal<Schemas['Member'][]>([]);
export const toasts = signal<{ id: number; text: string; action?: { label: string; run: () => void } }[]>([]);
export const connection = signal<'live' | 'reconnecting'>('live');
export const overview = signal<{
  unread: { all: number; mine: number; unassigned: number; inboxes: Record<string, number> };
  importing: { inbox_id: string; state: string; percent: number }[];
  labels: { label: string; open: number }[];
} | null>(null);

export const membership = computed(() => me.value?.memberships.find((m) => m.workspace_id === workspaceId.value) ?? null);

const WORKSPACE_KEY = 'svc.workspace';

export async function loadMe(): Promise<void> {
  const res = await api.GET('/v1/me');
  if (!res.data) {
    me.value = null;
    return;
  }
  const data = res.data as Me;
  setLocale(data.person.locale);
  const saved = localStorage.getItem(WORKSPACE_KEY);
  const pick = data.memberships.find((m) => m.workspace_id === saved) ?? data.memberships[0] ?? null;
  selectWorkspace(pick?.workspace_id ?? null);
  me.value = data;
  if (pick) await loadInboxes();
}

export function selectWorkspace(id: string | null) {
  workspaceId.value = id;
  useWorkspace(id);
  if (id) localStorage.setItem(WORKSPACE_KEY, id);
}

export async function switchWorkspace(id: string) {
  selectWorkspace(id);
  inboxes.value = [];
  await loadInboxes();
}

export async function loadInboxes() {
  const [res, team] = await Promise.all([must(api.GET('/v1/inboxes')), api.GET('/v1/members', { params: { query: { limit: 200 } } })]);
  inboxes.value = res.data as Inbox[];
  members.value = team.data?.data ?? [];
}

/** A member's name for display: "You" for the signed-in person. */
export function memberName(personId: string | null | undefined, you: string, fallback: string): string {
  if (!personId) return fallback;
  if (personId === me.value?.person.id) return you;
  const m = members.value.find((x) => x.person_id === personId);
  return m ? (m.name ?? m.email) : fallback;
}

export async function signOut() {
  await api.POST('/v1/auth/signout');
  me.value = null;
  location.assign('/sign-in');
}

let toastId = 0;
export function toast(text: string) {
  const id = ++toastId;
  toasts.value = [...toasts.value, { id, text }];
  setTimeout(() => (toasts.value = toasts.value.filter((x) => x.id !== id)), 5000);
}

/** A toast with one button (undo send) for `ms`; the answer removes it early. */
export function actionToast(text: string, action: { label: string; run: () => void }, ms: number): () => void {
  const id = ++toastId;
  const remove = () => (toasts.value = toasts.value.filter((x) => x.id !== id));
  toasts.value = [...toasts.value, { id, text, action: { label: action.label, run: () => (remove(), action.run()) } }];
  setTimeout(remove, ms);
  return remove;
}

export type ConversationStatus = Schemas['Conversation']['status'];

let overviewTimer: ReturnType<typeof setTimeout> | undefined;
/** Refreshes unread counts and import banners; calls within a second fold into one request. */
export function refreshOverview(now = false) {
  clearTimeout(overviewTimer);
  overviewTimer = setTimeout(
    async () => {
      const r = await api.GET('/v1/overview');
      if (r.data) overview.value = r.data;
    },
    now ? 0 : 1000,
  );
}
