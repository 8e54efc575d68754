// Members of a workspace: listing, changing roles and inbox limits, removing, leaving.
// Who may do it is decided in src/auth/access.ts; the rules about owners live here.

import { z } from 'zod';
import { forgetAvailability } from '../assignment/availability.js';
import { type Access, authorize } from '../auth/access.js';
import { ACCESS_REVOKED, type AccessRevoked } from '../auth/revocation.js';
import type { Ctx } from '../context.js';
import { applyConversationChanges } from '../conversations/changes.js';
import { openConversationsAssignedTo } from '../conversations/store.js';
import type { Db, Role } from '../db/schema.js';
import { announceEvents } from '../events/service.js';
import { missingInboxIds } from '../inboxes/store.js';
import { peopleByIds } from '../people/store.js';
import { conflict, forbidden, invalid, notFound } from '../platform/errors.js';
import { decodeCursor, toPage } from '../platform/pagination.js';
import { leaveAllTeams } from '../teams/store.js';
import { lockWorkspaces } from '../workspaces/store.js';

export interface MemberRow {
  id: string;
  workspace_id: string;
  person_id: string;
  role: Role;
  inbox_ids: string | null;
  created_at: string;
  last_seen_at: string | null;
  email: string;
  name: string | null;
}

export function formatMember(m: MemberRow) {
  return {
    id: m.id,
    person_id: m.person_id,
    email: m.email,
    name: m.name,
    role: m.role,
    inbox_ids: m.inbox_ids ? (JSON.parse(m.inbox_ids) as string[]) : null,
    joined_at: m.created_at,
    last_seen_at: m.last_seen_at,
  };
}

function membersQuery(db: Db, workspaceId: string) {
  return db
    .selectFrom('memberships')
    .select([
      'memberships.id',
      'memberships.workspace_id',
      'memberships.person_id',
      'memberships.role',
      'memberships.inbox_ids',
      'memberships.created_at',
      'memberships.last_seen_at',
    ])
    .where('memberships.workspace_id', '=', workspaceId);
}

/** Memberships with their person's email and name (people are read through people/store.ts, in one query). */
async function withPeople(db: Db, rows: Omit<MemberRow, 'email' | 'name'>[]): Promise<MemberRow[]> {
  const people = await peopleByIds(
    db,
    rows.map((m) => m.person_id),
  );
  return rows.flatMap((m) => {
    const person = people.get(m.person_id);
    return person ? [{ ...m, email: person.email, name: person.name }] : [];
  });
}

/** Members in the order they joined. */
export async function listMembers(ctx: Pick<Ctx, 'db'>, access: Access, page: { limit?: number; cursor?: string }) {
  authorize(access, 'members:read');
  const limit = page.limit ?? 50;
  const after = decodeCursor(page.cursor, z.object({ id: z.string() }));
  let q = membersQuery(ctx.db, access.workspaceId);
  if (after) q = q.where('memberships.id', '>', after.id);
  const rows = await withPeople(
    ctx.db,
    await q
      .orderBy('memberships.id')
      .limit(limit + 1)
      .execute(),
  );
  return toPage(rows, limit, (r) => ({ id: r.id }), formatMember);
}

export async function getMember(db: Db, workspaceId: string, memberId: string): Promise<MemberRow> {
  const found = await membersQuery(db, workspaceId).where('memberships.id', '=', memberId).executeTakeFirst();
  const [row] = found ? await withPeople(db, [found]) : [];
  if (!row) throw notFound('member');
  return row;
}

/** Checks an agent's inbox limit: null (every inbox) or a non-empty list of this workspace's inboxes. */
export async function checkInboxLimit(db: Db, workspaceId: string, role: Role, inboxIds: readonly string[] | null | undefined): Promise<string | null> {
  if (inboxIds === undefined || inboxIds === null) return null;
  if (role !== 'agent') throw invalid('only agents can be limited to some inboxes; owners and admins reach every inbox');
  const ids = [...new Set(inboxIds)];
  if (ids.length === 0) throw invalid('inbox_ids must name at least one inbox, or be null for every inbox');
  const missing = await missingInboxIds(db, workspaceId, ids, { live: false });
  if (missing.length) throw invalid(`no inbox ${missing.join(', ')} in this workspace`);
  return JSON.stringify(ids);
}

/** Postgres: serializes changes to one workspace's owners (SQLite transactions are serialized already). */
async function lockWorkspace(ctx: Pick<Ctx, 'dialect'>, trx: Db, workspaceId: string) {
  if (ctx.dialect === 'postgres') await lockWorkspaces(trx, [workspaceId]);
}

async function refuseLastOwner(trx: Db, member: MemberRow, doing: string) {
  if (member.role !== 'owner') return;
  const owners = await trx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', member.workspace_id)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  if (Number(owners.n) <= 1) throw conflict(`${doing} would leave the workspace without an owner; make another member an owner first`, 'last_owner');
}

function actorRole(access: Access): Role | undefined {
  return access.actor.kind === 'member' ? access.actor.role : undefined;
}

function revoke(ctx: Pick<Ctx, 'hub'>, member: MemberRow) {
  ctx.hub.emit(ACCESS_REVOKED, { membership: { workspaceId: member.workspace_id, personId: member.person_id } } satisfies AccessRevoked);
}

/**
 * Changes a member's role and/or inbox limit. Owners and admins manage members; only an owner makes
 * or unmakes an owner; the last owner cannot be demoted. Becoming an owner or admin clears the limit.
 */
export async function updateMember(ctx: Ctx, access: Access, memberId: string, patch: { role?: Role; inboxIds?: string[] | null }) {
  authorize(access, 'members:manage');
  const updated = await ctx.db.transaction().execute(async (trx) => {
    await lockWorkspace(ctx, trx, access.workspaceId);
    const member = await getMember(trx, access.workspaceId, memberId);
    const role = patch.role ?? member.role;
    if ((member.role === 'owner' || role === 'owner') && role !== member.role && actorRole(access) !== 'owner') {
      throw forbidden('only an owner makes or unmakes an owner');
    }
    if (member.role === 'owner' && role === 'owner' && patch.inboxIds !== undefined && actorRole(access) !== 'owner') {
      throw forbidden('only an owner changes an owner');
    }
    if (role !== 'owner' && member.role === 'owner') await refuseLastOwner(trx, member, 'demoting the last owner');
    let inboxIds: string | null;
    if (patch.inboxIds !== undefined) inboxIds = await checkInboxLimit(trx, access.workspaceId, role, patch.inboxIds);
    else inboxIds = role === 'agent' ? member.inbox_ids : null;
    if (role === member.role && inboxIds === member.inbox_ids) return { member, changed: false };
    await trx.updateTable('memberships').set({ role, inbox_ids: inboxIds }).where('id', '=', member.id).execute();
    return { member: { ...member, role, inbox_ids: inboxIds }, changed: true };
  });
  if (updated.changed) {
    ctx.log.info('member changed', { workspace_id: access.workspaceId, member_id: memberId, role: updated.member.role });
    // Open sockets were authorized for the old role or inboxes: they close and reconnect with the new.
    revoke(ctx, updated.member);
  }
  return formatMember(updated.member);
}

/**
 * Removes a member (owners and admins; anyone may remove themselves, i.e. leave). Their sessions
 * lose the workspace at once, open realtime sockets close, and the conversations assigned to them
 * that are not closed become unassigned (one conversation.updated each).
 */
export async function removeMember(ctx: Ctx, access: Access, memberId: string): Promise<{ member_id: string; unassigned_conversations: number }> {
  const self = access.actor.kind === 'member' ? access.actor.personId : undefined;
  const removed = await ctx.db.transaction().execute(async (trx) => {
    await lockWorkspace(ctx, trx, access.workspaceId);
    // The caller's own membership needs no permission; anyone else's does, checked before the
    // lookup so that ids stay secret from those who may not manage members.
    const own = self
      ? await trx.selectFrom('memberships').select('id').where('workspace_id', '=', access.workspaceId).where('person_id', '=', self).executeTakeFirst()
      : undefined;
    const leaving = own?.id === memberId;
    if (!leaving) authorize(access, 'members:manage');
    const member = await getMember(trx, access.workspaceId, memberId);
    if (!leaving && member.role === 'owner' && actorRole(access) !== 'owner') throw forbidden('only an owner removes an owner');
    await refuseLastOwner(trx, member, leaving ? 'leaving' : 'removing the last owner');
    await trx.deleteFrom('memberships').where('id', '=', member.id).execute();
    await leaveAllTeams(trx, access.workspaceId, member.person_id);
    await forgetAvailability(trx, access.workspaceId, member.person_id);
    const assigned = await openConversationsAssignedTo(trx, access.workspaceId, member.person_id);
    const tx = { db: trx, clock: ctx.clock };
    const author = access.actor.kind === 'member' ? { type: 'member' as const, personId: access.actor.personId } : { type: 'system' as const };
    for (const conversation of assigned) {
      await applyConversationChanges(tx, { conversation, patch: { assigneeId: null }, author, reason: leaving ? 'member_left' : 'member_removed' });
    }
    return { member, unassigned: assigned.length, leaving };
  });
  if (removed.unassigned) announceEvents(ctx);
  revoke(ctx, removed.member);
  ctx.log.info(removed.leaving ? 'member left' : 'member removed', {
    workspace_id: access.workspaceId,
    member_id: memberId,
    unassigned_conversations: removed.unassigned,
  });
  return { member_id: memberId, unassigned_conversations: removed.unassigned };
}

export interface InboxMember {
  personId: string;
  role: Role;
  email: string;
  name: string | null;
  locale: string;
}

/** The members who see an inbox (no inbox limit, or a limit that names it), for notifications. */
export async function membersSeeingInbox(ctx: Pick<Ctx, 'db'>, workspaceId: string, inboxId: string): Promise<InboxMember[]> {
  const rows = await ctx.db
    .selectFrom('memberships')
    .select(['person_id', 'inbox_ids', 'role'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('person_id')
    .execute();
  const seeing = rows.filter((r) => r.inbox_ids === null || (JSON.parse(r.inbox_ids) as string[]).includes(inboxId));
  const people = await peopleByIds(
    ctx.db,
    seeing.map((r) => r.person_id),
  );
  return seeing.flatMap((r) => {
    const person = people.get(r.person_id);
    return person ? [{ personId: r.person_id, role: r.role, email: person.email, name: person.name, locale: person.locale }] : [];
  });
}

/** The e-mail addresses of the workspace's members (lower case): mail to the team's own people is never answered automatically. */
export async function memberAddresses(db: Db, workspaceId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('memberships').select('person_id').where('workspace_id', '=', workspaceId).execute();
  const people = await peopleByIds(
    db,
    rows.map((r) => r.person_id),
  );
  return new Set([...people.values()].map((p) => p.email.toLowerCase()));
}
