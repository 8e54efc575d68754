// Memberships for other features: they use these instead of querying the memberships table
// themselves. Imports no feature, so any may use it.
import type { Db, Role } from '../db/schema.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';

/** Whether the person is a member of the workspace. */
export async function isMemberOf(db: Db, workspaceId: string, personId: string): Promise<boolean> {
  const row = await db
    .selectFrom('memberships')
    .select('person_id')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Makes the person a member with this role (a member already gets the role). */
export async function addMember(ctx: { db: Db; clock: Clock }, workspaceId: string, personId: string, role: Role): Promise<void> {
  await ctx.db
    .insertInto('memberships')
    .values({ id: newId('mem'), workspace_id: workspaceId, person_id: personId, role, created_at: iso(ctx.clock.now()) })
    .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet({ role }))
    .execute();
}

/** The people who own the workspace (for notices meant for owners). */
export async function ownerIdsOf(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('memberships')
    .select('person_id')
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .orderBy('person_id')
    .execute();
  return rows.map((r) => r.person_id);
}

/** Every member of the workspace (person ids). */
export async function memberIdsOf(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await db.selectFrom('memberships').select('person_id').where('workspace_id', '=', workspaceId).execute();
  return rows.map((r) => r.person_id);
}

/** Of these people, the members of the workspace who reach the inbox (no inbox limit, or one naming it). */
export async function membersReachingInbox(db: Db, workspaceId: string, inboxId: string, personIds?: readonly string[]): Promise<string[]> {
  if (personIds && personIds.length === 0) return [];
  let q = db.selectFrom('memberships').select(['person_id', 'inbox_ids']).where('workspace_id', '=', workspaceId);
  if (personIds) q = q.where('person_id', 'in', personIds);
  const rows = await q.orderBy('person_id').execute();
  return rows.filter((r) => r.inbox_ids === null || (JSON.parse(r.inbox_ids) as string[]).includes(inboxId)).map((r) => r.person_id);
}
