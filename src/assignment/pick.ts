// Auto-assignment (issue 36): who gets a new or reopened unassigned conversation, decided inside the
// transaction that records it. The pool is the conversation's team's members (else the members who
// reach the inbox), filtered to those who reach the inbox, are available (./availability.ts) and have
// fewer open assigned conversations than the capacity. Round robin takes the next after the pool's
// cursor; least busy the fewest open conversations, ties broken by the same rotation, so both are
// fair over time.
//
// Exactly once across processes: every auto-assignment of a workspace first takes the row lock on its
// `assignment_cursors` row (an UPDATE … RETURNING, which on Postgres waits for a concurrent holder and
// then reads its committed cursor; on SQLite the write lock is the database's). The counts read after
// it include every assignment committed before, so two processes never pass a capacity together.

import { openAssignedCounts } from '../conversations/store.js';
import type { AssignmentMode, Db } from '../db/schema.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import { membersReachingInbox } from '../members/store.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { findTeam, type TeamSettings, teamMemberIds, teamServingInbox } from '../teams/store.js';
import { availabilityOf } from './availability.js';

interface Settings {
  assignment: AssignmentMode;
  capacity: number | null;
}
interface InboxRouting {
  team: TeamSettings | null;
  inbox: Settings | null;
}

/** The team serving the inbox and the inbox's own setting, cached while the reaction settings epoch holds (migration 0049's triggers). */
async function inboxRouting(db: Db, inboxId: string): Promise<InboxRouting> {
  return cachedReactionSetting(db, `assignment:${inboxId}`, async () => {
    const [team, inbox] = await Promise.all([
      teamServingInbox(db, inboxId),
      db.selectFrom('inbox_assignment').select(['assignment', 'capacity']).where('inbox_id', '=', inboxId).executeTakeFirst(),
    ]);
    return { team: team ?? null, inbox: inbox ?? null };
  });
}

export interface AutoAssignment {
  /** The team the conversation belongs to after it (its own, or the inbox's team for one without). */
  teamId: string | null;
  /** The member chosen, or null when no one is available under the capacity (or the mode is off). */
  assigneeId: string | null;
}

/** Rotation order starting after `last` (the pool sorted by person id). */
function rotated(pool: readonly string[], last: string | undefined): string[] {
  if (!last) return [...pool];
  const start = pool.findIndex((id) => id > last);
  return start <= 0 ? [...pool] : [...pool.slice(start), ...pool.slice(0, start)];
}

/**
 * The assignment for a conversation in `inboxId` (with team `teamId`, or none): null when nothing
 * applies (no team and auto-assignment off). Call only for live conversations (never imported, spam
 * or quiet ones).
 */
export async function autoAssign(
  tx: { db: Db; clock: Clock },
  input: { workspaceId: string; inboxId: string; teamId: string | null },
): Promise<AutoAssignment | null> {
  const routing = await inboxRouting(tx.db, input.inboxId);
  let team: TeamSettings | null = routing.team;
  if (input.teamId) {
    const own = await findTeam(tx.db, input.workspaceId, input.teamId);
    team = own ? { id: own.id, assignment: own.assignment, capacity: own.capacity } : null;
  }
  const teamId = team?.id ?? null;
  const setting: (Settings & { poolId: string }) | null =
    team && team.assignment !== 'off'
      ? { ...team, poolId: team.id }
      : routing.inbox && routing.inbox.assignment !== 'off'
        ? { ...routing.inbox, poolId: input.inboxId }
        : null;
  if (!setting) return teamId ? { teamId, assigneeId: null } : null;

  const now = tx.clock.now();
  await tx.db
    .insertInto('assignment_cursors')
    .values({ workspace_id: input.workspaceId, cursors: '{}', updated_at: iso(now) })
    .onConflict((oc) => oc.column('workspace_id').doNothing())
    .execute();
  const locked = await tx.db
    .updateTable('assignment_cursors')
    .set({ updated_at: iso(now) })
    .where('workspace_id', '=', input.workspaceId)
    .returning('cursors')
    .executeTakeFirstOrThrow();
  const cursors = JSON.parse(locked.cursors) as Record<string, string>;

  const members = teamId ? await teamMemberIds(tx.db, teamId) : undefined;
  const pool = await membersReachingInbox(tx.db, input.workspaceId, input.inboxId, members);
  const [availability, load] = await Promise.all([availabilityOf(tx.db, input.workspaceId, pool, now), openAssignedCounts(tx.db, input.workspaceId, pool)]);
  const order = rotated(pool, cursors[setting.poolId]);
  const eligible = order.filter((id) => availability.get(id)?.available && (setting.capacity === null || load.get(id)! < setting.capacity));
  let chosen: string | undefined;
  if (setting.assignment === 'round_robin') chosen = eligible[0];
  else {
    let least = Number.POSITIVE_INFINITY;
    for (const id of eligible) {
      if (load.get(id)! < least) {
        least = load.get(id)!;
        chosen = id;
      }
    }
  }
  if (!chosen) return { teamId, assigneeId: null };
  cursors[setting.poolId] = chosen;
  await tx.db
    .updateTable('assignment_cursors')
    .set({ cursors: JSON.stringify(cursors) })
    .where('workspace_id', '=', input.workspaceId)
    .execute();
  return { teamId, assigneeId: chosen };
}
