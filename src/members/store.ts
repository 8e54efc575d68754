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
