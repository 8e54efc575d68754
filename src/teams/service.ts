// Teams (issue 36): a workspace's teams, their members and the inboxes they serve, with the team's
// auto-assignment setting (src/assignment). Taking a member out of a team unassigns them from the
// team's conversations that are not closed; deleting a team takes its conversations out of it. Both
// write a timeline line and one conversation.updated per conversation (applyConversationChanges), in
// the transaction of the change.

import { availabilityOf, type MemberAvailability } from '../assignment/availability.js';
import { type Access, authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { applyConversationChanges } from '../conversations/changes.js';
import type { Author } from '../conversations/service.js';
import { clearTeamOfClosed, liveConversationsOfTeam, openAssignedCounts, openCountsByTeam } from '../conversations/store.js';
import type { AssignmentMode, Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { findLiveInbox } from '../inboxes/store.js';
import { memberIdsOf } from '../members/store.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';
import { findTeam, type TeamRow } from './store.js';

export const MAX_TEAMS = 200;
export const MAX_TEAM_MEMBERS = 500;
export const MAX_TEAM_INBOXES = 200;
export const MAX_NAME_LENGTH = 100;
export const MAX_CAPACITY = 1000;
export const ASSIGNMENT_MODES: readonly AssignmentMode[] = ['off', 'round_robin', 'least_busy'];

export interface TeamInput {
  name?: string;
  memberIds?: string[];
  inboxIds?: string[];
  assignment?: AssignmentMode;
  capacity?: number | null;
}

type Issue = { path: string; message: string };

function refuse(issues: Issue[]): never {
  throw invalid(`${issues[0].path}: ${issues[0].message}`, { issues });
}

/** Checks the input against the workspace (every problem named by its field); returns it normalised. */
async function checkInput(db: Db, workspaceId: string, input: TeamInput, creating: boolean) {
  const issues: Issue[] = [];
  let name: string | undefined;
  if (input.name !== undefined) {
    name = input.name.trim();
    if (!name || charCount(name) > MAX_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(name))
      issues.push({ path: 'name', message: `1 to ${MAX_NAME_LENGTH} printable characters` });
  } else if (creating) issues.push({ path: 'name', message: 'required' });
  const memberIds = input.memberIds ? [...new Set(input.memberIds)].sort() : undefined;
  if (memberIds) {
    if (memberIds.length > MAX_TEAM_MEMBERS) issues.push({ path: 'member_ids', message: `at most ${MAX_TEAM_MEMBERS} members` });
    const members = new Set(await memberIdsOf(db, workspaceId));
    memberIds.forEach((id, n) => {
      if (!members.has(id)) issues.push({ path: `member_ids.${n}`, message: `${id} is not a member of this workspace` });
    });
  }
  const inboxIds = input.inboxIds ? [...new Set(input.inboxIds)].sort() : undefined;
  if (inboxIds) {
    if (inboxIds.length > MAX_TEAM_INBOXES) issues.push({ path: 'inbox_ids', message: `at most ${MAX_TEAM_INBOXES} inboxes` });
    for (const [n, id] of inboxIds.entries()) {
      if (!(await findLiveInbox(db, workspaceId, id))) issues.push({ path: `inbox_ids.${n}`, message: `${id} is not an inbox of this workspace` });
    }
  }
  if (input.assignment !== undefined && !ASSIGNMENT_MODES.includes(input.assignment))
    issues.push({ path: 'assignment', message: 'off, round_robin or least_busy' });
  if (input.capacity !== undefined && input.capacity !== null && (!Number.isInteger(input.capacity) || input.capacity < 1 || input.capacity > MAX_CAPACITY))
    issues.push({ path: 'capacity', message: `a whole number from 1 to ${MAX_CAPACITY}, or null for no limit` });
  if (issues.length) refuse(issues);
  return { name, memberIds, inboxIds };
}

async function refuseTakenName(db: Db, workspaceId: string, name: string, exceptId?: string) {
  let q = db.selectFrom('teams').select('id').where('workspace_id', '=', workspaceId).where('name_key', '=', name.toLowerCase());
  if (exceptId) q = q.where('id', '!=', exceptId);
  if (await q.executeTakeFirst()) throw conflict(`a team named “${name}” exists already`, 'team_name_taken');
}

export interface TeamView {
  id: string;
  name: string;
  member_ids: string[];
  inbox_ids: string[];
  assignment: AssignmentMode;
  capacity: number | null;
  members: (MemberAvailability & { open_conversations: number })[];
  open_conversations: number;
  unassigned_conversations: number;
  created_at: string;
  updated_at: string;
}

/** Teams as the API shows them: members (with availability and load) and inboxes, open and unassigned counts. */
async function viewsOf(ctx: Pick<Ctx, 'db' | 'clock'>, workspaceId: string, rows: TeamRow[]): Promise<TeamView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [members, inboxes, counts, current] = await Promise.all([
    ctx.db.selectFrom('team_members').select(['team_id', 'person_id']).where('team_id', 'in', ids).orderBy('person_id').execute(),
    ctx.db.selectFrom('team_inboxes').select(['team_id', 'inbox_id']).where('team_id', 'in', ids).orderBy('inbox_id').execute(),
    openCountsByTeam(ctx.db, workspaceId),
    memberIdsOf(ctx.db, workspaceId),
  ]);
  const still = new Set(current);
  const people = [...new Set(members.map((m) => m.person_id))].filter((id) => still.has(id));
  const [availability, load] = await Promise.all([
    availabilityOf(ctx.db, workspaceId, people, ctx.clock.now()),
    openAssignedCounts(ctx.db, workspaceId, people),
  ]);
  return rows.map((r) => {
    const memberIds = members.filter((m) => m.team_id === r.id && still.has(m.person_id)).map((m) => m.person_id);
    const c = counts.get(r.id) ?? { open: 0, unassigned: 0 };
    return {
      id: r.id,
      name: r.name,
      member_ids: memberIds,
      inbox_ids: inboxes.filter((i) => i.team_id === r.id).map((i) => i.inbox_id),
      assignment: r.assignment,
      capacity: r.capacity,
      members: memberIds.map((id) => ({ ...availability.get(id)!, open_conversations: load.get(id) ?? 0 })),
      open_conversations: c.open,
      unassigned_conversations: c.unassigned,
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  });
}

/** Every team of the workspace, by name (a workspace has at most MAX_TEAMS). */
export async function listTeams(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access) {
  authorize(access, 'teams:read');
  const rows = await ctx.db.selectFrom('teams').selectAll().where('workspace_id', '=', access.workspaceId).orderBy('name_key').orderBy('id').execute();
  return { data: await viewsOf(ctx, access.workspaceId, rows), next_cursor: null };
}

async function teamFor(db: Db, access: Access, teamId: string): Promise<TeamRow> {
  const team = await findTeam(db, access.workspaceId, teamId);
  if (!team) throw notFound('team');
  return team;
}

export async function getTeam(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, teamId: string): Promise<TeamView> {
  authorize(access, 'teams:read');
  const [view] = await viewsOf(ctx, access.workspaceId, [await teamFor(ctx.db, access, teamId)]);
  return view;
}

async function replaceMembers(db: Db, team: TeamRow, memberIds: readonly string[], at: string) {
  await db.deleteFrom('team_members').where('team_id', '=', team.id).execute();
  if (memberIds.length)
    await db
      .insertInto('team_members')
      .values(memberIds.map((person_id) => ({ team_id: team.id, person_id, workspace_id: team.workspace_id, created_at: at })))
      .execute();
}

async function replaceInboxes(db: Db, team: TeamRow, inboxIds: readonly string[]) {
  await db.deleteFrom('team_inboxes').where('team_id', '=', team.id).execute();
  if (inboxIds.length)
    await db
      .insertInto('team_inboxes')
      .values(inboxIds.map((inbox_id) => ({ team_id: team.id, inbox_id, workspace_id: team.workspace_id })))
      .execute();
}

export async function createTeam(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, input: TeamInput): Promise<TeamView> {
  authorize(access, 'teams:manage');
  const team = await inTransaction(ctx.db, async (trx) => {
    const checked = await checkInput(trx, access.workspaceId, input, true);
    const name = checked.name!;
    await refuseTakenName(trx, access.workspaceId, name);
    const count = await trx
      .selectFrom('teams')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', access.workspaceId)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_TEAMS) throw conflict(`a workspace has at most ${MAX_TEAMS} teams`, 'too_many_teams');
    const at = iso(ctx.clock.now());
    const row: TeamRow = {
      id: newId('team'),
      workspace_id: access.workspaceId,
      name,
      name_key: name.toLowerCase(),
      assignment: input.assignment ?? 'off',
      capacity: input.capacity ?? null,
      created_at: at,
      updated_at: at,
    };
    await trx.insertInto('teams').values(row).execute();
    await replaceMembers(trx, row, checked.memberIds ?? [], at);
    await replaceInboxes(trx, row, checked.inboxIds ?? []);
    return row;
  });
  return (await viewsOf(ctx, access.workspaceId, [team]))[0];
}

function authorOf(access: Access): Author {
  return access.actor.kind === 'member' ? { type: 'member', personId: access.actor.personId } : { type: 'api_key', keyId: access.actor.keyId };
}

/**
 * Changes a team. Members taken out of it are unassigned from its conversations that are not closed
 * (they stay in the team, back in its queue), each with a timeline line and one conversation.updated.
 */
export async function updateTeam(ctx: Ctx, access: Access, teamId: string, input: TeamInput): Promise<TeamView> {
  authorize(access, 'teams:manage');
  const result = await inTransaction(ctx.db, async (trx) => {
    const team = await teamFor(trx, access, teamId);
    const checked = await checkInput(trx, access.workspaceId, input, false);
    const at = iso(ctx.clock.now());
    const set: Partial<TeamRow> = { updated_at: at };
    if (checked.name !== undefined && checked.name !== team.name) {
      await refuseTakenName(trx, access.workspaceId, checked.name, team.id);
      set.name = checked.name;
      set.name_key = checked.name.toLowerCase();
    }
    if (input.assignment !== undefined) set.assignment = input.assignment;
    if (input.capacity !== undefined) set.capacity = input.capacity;
    // The unassignments (their events) come before the settings change: reactions cache what they
    // read under the settings epoch, which the change moves (src/events/settings-cache.ts).
    let unassigned = 0;
    if (checked.memberIds) {
      const before = (await trx.selectFrom('team_members').select('person_id').where('team_id', '=', team.id).execute()).map((r) => r.person_id);
      const leaving = before.filter((id) => !checked.memberIds!.includes(id));
      const tx = { db: trx, clock: ctx.clock };
      for (const personId of leaving) {
        for (const conversation of await liveConversationsOfTeam(trx, access.workspaceId, team.id, personId)) {
          await applyConversationChanges(tx, { conversation, patch: { assigneeId: null }, author: authorOf(access), reason: 'team_member_removed' });
          unassigned++;
        }
      }
    }
    await trx.updateTable('teams').set(set).where('id', '=', team.id).execute();
    if (checked.memberIds) await replaceMembers(trx, team, checked.memberIds, at);
    if (checked.inboxIds) await replaceInboxes(trx, team, checked.inboxIds);
    return { team: { ...team, ...set }, unassigned };
  });
  if (result.unassigned) announceEvents(ctx);
  return (await viewsOf(ctx, access.workspaceId, [result.team]))[0];
}

/**
 * Deletes a team. Its conversations that are not closed leave it with a timeline line and one
 * conversation.updated each (their assignees keep them); closed ones leave it without a line.
 */
export async function deleteTeam(ctx: Ctx, access: Access, teamId: string): Promise<{ team_id: string; conversations_updated: number }> {
  authorize(access, 'teams:manage');
  const updated = await inTransaction(ctx.db, async (trx) => {
    const team = await teamFor(trx, access, teamId);
    const live = await liveConversationsOfTeam(trx, access.workspaceId, team.id);
    const tx = { db: trx, clock: ctx.clock };
    for (const conversation of live) {
      await applyConversationChanges(tx, { conversation, patch: { teamId: null }, author: authorOf(access), reason: 'team_deleted' });
    }
    await clearTeamOfClosed(trx, access.workspaceId, team.id);
    await trx.deleteFrom('teams').where('id', '=', team.id).execute();
    return live.length;
  });
  if (updated) announceEvents(ctx);
  return { team_id: teamId, conversations_updated: updated };
}
