// Who is on a workspace's team, for features that map addresses or ids to members.
import type { Db } from '../db/schema.js';

/** The person ids of the workspace's members. */
export async function memberPersonIds(db: Db, workspaceId: string): Promise<string[]> {
  return (await db.selectFrom('memberships').select('person_id').where('workspace_id', '=', workspaceId).execute()).map((r) => r.person_id);
}

export async function isMember(db: Db, workspaceId: string, personId: string): Promise<boolean> {
  const member = await db
    .selectFrom('memberships')
    .select('person_id')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return member !== undefined;
}
