// The workspace's teams, for the sidebar's views, the details column and the timeline.
import { signal } from '@preact/signals';
import { api, type Schemas } from '../api';
import { me } from '../state';

export type Team = Schemas['Team'];
export const teams = signal<Team[]>([]);

export async function loadTeams(): Promise<void> {
  const res = await api.GET('/v1/teams');
  teams.value = res.data?.data ?? [];
}

/** The teams the signed-in member belongs to. */
export function myTeamIds(): string[] {
  const id = me.value?.person.id;
  return teams.value.filter((x) => id && x.member_ids.includes(id)).map((x) => x.id);
}

export function teamName(id: unknown, fallback: string): string {
  return teams.value.find((x) => x.id === id)?.name ?? fallback;
}
