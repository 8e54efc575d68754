// Teams for other features (conversations check a team_id; auto-assignment reads a team's settings
// and members; the conversation list's "my team's" view): the only reads of teams' tables outside
// this folder go through here.
import type { AssignmentMode, Db, TeamsTable } from '../db/schema.js';

export type TeamRow = TeamsTable;

export async function findTeam(db: Db, workspaceId: string, teamId: string): Promise<TeamRow | undefined> {
  return db.selectFrom('teams').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', teamId).executeTakeFirst();
}

/** The teams a member belongs to (ids). */
export async function teamIdsOfMember(db: Db, workspaceId: string, personId: string): Promise<string[]> {
  const rows = await db.selectFrom('team_members').select('team_id').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
  return rows.map((r) => r.team_id);
}

/** A team's members (person ids, sorted). */
export async function teamMemberIds(db: Db, teamId: string): Promise<string[]> {
  const rows = await db.selectFrom('team_members').select('person_id').where('team_id', '=', teamId).orderBy('person_id').execute();
  return rows.map((r) => r.person_id);
}

export interface TeamSettings {
  id: string;
  assignment: AssignmentMode;
  capacity: number | null;
}

/** The team that serves an inbox: the oldest of those that name it (a new conversation there joins it), or undefined. */
export async function teamServingInbox(db: Db, inboxId: string): Promise<TeamSettings | undefined> {
  return db
    .selectFrom('team_inboxes as ti')
    .innerJoin('teams as t', 't.id', 'ti.team_id')
    .select(['t.id', 't.assignment', 't.capacity'])
    .where('ti.inbox_id', '=', inboxId)
    .orderBy('t.created_at')
    .orderBy('t.id')
    .limit(1)
    .executeTakeFirst();
}

/** A member who leaves the workspace leaves its teams. */
export async function leaveAllTeams(db: Db, workspaceId: string, personId: string): Promise<void> {
  await db.deleteFrom('team_members').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
}
