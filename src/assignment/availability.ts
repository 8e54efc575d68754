// Whether members take auto-assigned conversations: "away" never, "available" always, and without a
// choice (auto) while they are online in the panel (a live realtime connection, src/realtime).
import type { AvailabilityStatus, Db } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { onlineMembers } from '../realtime/team-online.js';

export type AvailabilityChoice = AvailabilityStatus | 'auto';
export const AVAILABILITY_CHOICES: readonly AvailabilityChoice[] = ['auto', 'available', 'away'];

export interface MemberAvailability {
  person_id: string;
  /** The member's choice: auto (available while online in the panel), available or away. */
  availability: AvailabilityChoice;
  online: boolean;
  /** Whether auto-assignment may give them a conversation now. */
  available: boolean;
}

export async function availabilityOf(db: Db, workspaceId: string, personIds: readonly string[], now: Date): Promise<Map<string, MemberAvailability>> {
  const out = new Map<string, MemberAvailability>();
  if (personIds.length === 0) return out;
  const [choices, online] = await Promise.all([
    db.selectFrom('member_availability').select(['person_id', 'status']).where('workspace_id', '=', workspaceId).where('person_id', 'in', personIds).execute(),
    onlineMembers(db, workspaceId, personIds, now),
  ]);
  const chosen = new Map(choices.map((r) => [r.person_id, r.status]));
  for (const id of personIds) {
    const availability: AvailabilityChoice = chosen.get(id) ?? 'auto';
    const isOnline = online.has(id);
    out.set(id, { person_id: id, availability, online: isOnline, available: availability === 'available' || (availability === 'auto' && isOnline) });
  }
  return out;
}

/** A member's own choice in a workspace ('auto' removes it). */
export async function setAvailability(db: Db, workspaceId: string, personId: string, choice: AvailabilityChoice, now: Date): Promise<void> {
  if (choice === 'auto') {
    await db.deleteFrom('member_availability').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
    return;
  }
  await db
    .insertInto('member_availability')
    .values({ workspace_id: workspaceId, person_id: personId, status: choice, updated_at: iso(now) })
    .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet({ status: choice, updated_at: iso(now) }))
    .execute();
}

/** A member who leaves the workspace leaves no choice behind. */
export async function forgetAvailability(db: Db, workspaceId: string, personId: string): Promise<void> {
  await db.deleteFrom('member_availability').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
}
