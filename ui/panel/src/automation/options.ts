// What the pickers of conditions and actions offer, read from the API: inboxes and members (already in
// the shared state), teams, saved replies, webhook endpoints (owners and admins only) and the labels
// in use. Read once per page; `loadOptions()` again refreshes them.
import { signal } from '@preact/signals';
import { api, must } from '../api';
import { loadCustomFields } from '../custom-fields';
import { inboxes, members, membership, overview } from '../state';
import { loadTeams, teams } from '../teams';

export type Named = { id: string; name: string };
export const savedReplies = signal<Named[]>([]);
export const endpoints = signal<Named[]>([]);
export const optionsLoaded = signal(false);

export async function loadOptions(): Promise<void> {
  const manager = membership.value?.role === 'owner' || membership.value?.role === 'admin';
  const [, replies, hooks] = await Promise.all([
    Promise.all([loadTeams(), loadCustomFields()]),
    must(api.GET('/v1/saved-replies', { params: { query: { limit: 200 } } })),
    manager ? must(api.GET('/v1/webhooks', { params: { query: { limit: 200 } } })) : Promise.resolve({ data: [] }),
  ]);
  savedReplies.value = replies.data.map((r) => ({ id: r.id, name: `#${r.name}` }));
  endpoints.value = hooks.data.map((h) => ({ id: h.id, name: h.url }));
  optionsLoaded.value = true;
}

export const inboxOptions = (): Named[] => inboxes.value.map((i) => ({ id: i.id, name: i.name }));
export const memberOptions = (): Named[] => members.value.map((m) => ({ id: m.person_id, name: m.name ?? m.email }));
export const teamOptions = (): Named[] => teams.value.map((x) => ({ id: x.id, name: x.name }));
/** Labels on open conversations (the overview's), for suggestions: a rule may name a new label. */
export const labelSuggestions = (): string[] => (overview.value?.labels ?? []).map((l) => l.label);

export function nameOf(list: Named[], id: string | null | undefined, fallback: string): string {
  return list.find((x) => x.id === id)?.name ?? fallback;
}
