import type { Ctx } from '../context.js';
import { reusableQuery } from '../db/reusable-query.js';
import type { Role, WorkspacesTable } from '../db/schema.js';
import { addMember } from '../members/store.js';
import { findOrCreatePerson } from '../people/service.js';
import { iso } from '../platform/clock.js';
import { conflict, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';

export type WorkspaceRow = WorkspacesTable;
type C = Pick<Ctx, 'db' | 'clock'>;

export const WORKSPACE_NAME_MAX = 200;

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalid('workspace name must not be empty');
  if (charCount(trimmed) > WORKSPACE_NAME_MAX) throw invalid(`workspace name must be at most ${WORKSPACE_NAME_MAX} characters`);
  return trimmed;
}

/** A live (not deleted) workspace by id, or by its exact name; a shared name is refused with the ids. */
export async function resolveWorkspace(ctx: C, ref: string): Promise<WorkspaceRow> {
  const byId = await ctx.db.selectFrom('workspaces').selectAll().where('id', '=', ref).where('deleted_at', 'is', null).executeTakeFirst();
  if (byId) return byId;
  const byName = await ctx.db.selectFrom('workspaces').selectAll().where('name', '=', ref).where('deleted_at', 'is', null).orderBy('id').execute();
  if (byName.length === 0) throw notFound(`workspace ${JSON.stringify(ref)}`);
  if (byName.length > 1) {
    throw conflict(
      `workspace name ${JSON.stringify(ref)} is shared by several workspaces; use an id: ${byName.map((w) => w.id).join(', ')}`,
      'ambiguous_workspace',
      {
        ids: byName.map((w) => w.id),
      },
    );
  }
  return byName[0];
}

// Read on every GET /v1/workspace: compiled once.
const liveWorkspaceById = reusableQuery((db, id: string) => db.selectFrom('workspaces').selectAll().where('id', '=', id).where('deleted_at', 'is', null));

export async function getWorkspace(ctx: C, id: string): Promise<WorkspaceRow> {
  const [row] = await liveWorkspaceById(ctx.db, id);
  if (!row) throw notFound('workspace');
  return row;
}

/** The ids of every workspace not deleted. */
export async function liveWorkspaceIds(ctx: C | Pick<Ctx, 'db'>): Promise<string[]> {
  return (await ctx.db.selectFrom('workspaces').select('id').where('deleted_at', 'is', null).orderBy('id').execute()).map((w) => w.id);
}

export async function countWorkspaces(ctx: C): Promise<number> {
  const row = await ctx.db
    .selectFrom('workspaces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Creates a workspace with its first owner (bootstrap and sign-up). */
export async function createWorkspace(
  ctx: C,
  input: { name: string; ownerEmail: string; ownerName?: string; locale?: string; origin: WorkspaceRow['origin'] },
): Promise<{ workspace: WorkspaceRow; personId: string }> {
  const name = checkName(input.name);
  return ctx.db.transaction().execute(async (trx) => {
    const now = iso(ctx.clock.now());
    const person = await findOrCreatePerson({ db: trx, clock: ctx.clock }, { email: input.ownerEmail, name: input.ownerName, locale: input.locale });
    const workspace: WorkspaceRow = {
      id: newId('ws', ctx.clock.now().getTime()),
      name,
      origin: input.origin,
      retention_days: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await trx.insertInto('workspaces').values(workspace).execute();
    await addMember({ db: trx, clock: ctx.clock }, workspace.id, person.id, 'owner');
    return { workspace, personId: person.id };
  });
}

export async function updateWorkspace(ctx: C, id: string, patch: { retention_days?: number | null }): Promise<WorkspaceRow> {
  const set: Partial<WorkspaceRow> = { updated_at: iso(ctx.clock.now()) };
  if (patch.retention_days !== undefined) set.retention_days = patch.retention_days;
  await ctx.db.updateTable('workspaces').set(set).where('id', '=', id).where('deleted_at', 'is', null).execute();
  return getWorkspace(ctx, id);
}

export function formatWorkspace(w: WorkspaceRow) {
  return { id: w.id, name: w.name, retention_days: w.retention_days, created_at: w.created_at, updated_at: w.updated_at };
}
