// Saved views (issue 37): a named filter + sort over conversations. Personal views belong to one
// member; shared ones (owner_id null) are seen by the whole workspace and managed by owners and
// admins (or keys with workspace:manage). The sidebar shows shared ones first, then the member's own,
// each group in its `position` order; moving one renumbers its group in one transaction.
import { type Access, authorize, isAllowed } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { checkFilter, type ViewFilter } from '../conversations/filters.js';
import { type ConversationSort, countConversations } from '../conversations/lists.js';
import { customFieldConditions } from '../custom-fields/store.js';
import type { Db, SavedViewsTable } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { forbidden, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { charCount } from '../platform/text.js';

export const MAX_NAME_LENGTH = 80;
/** Per group: the shared views of a workspace, or one member's own. */
export const MAX_VIEWS = 100;
export const SORTS = ['activity', 'created', 'sla_due'] as const;

export interface ViewInput {
  name?: string;
  filters?: unknown;
  sort?: ConversationSort;
  shared?: boolean;
  position?: number;
}

const me = (access: Access) => (access.actor.kind === 'member' ? access.actor.personId : null);

export function formatView(row: SavedViewsTable, access: Access) {
  return {
    id: row.id,
    name: row.name,
    shared: row.owner_id === null,
    filters: JSON.parse(row.filters) as ViewFilter,
    sort: row.sort,
    position: row.position,
    editable: row.owner_id === null ? isAllowed(access, 'views:manage_shared') : row.owner_id === me(access),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type ViewAnswer = ReturnType<typeof formatView>;

function checkName(name: string): string {
  const n = name.trim();
  if (!n || charCount(n) > MAX_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(n)) throw invalid(`name must be 1 to ${MAX_NAME_LENGTH} printable characters`);
  return n;
}

/** Shared views first, then the caller's own, each in its order. */
async function visibleRows(db: Db, access: Access): Promise<SavedViewsTable[]> {
  const person = me(access);
  const rows = await db
    .selectFrom('saved_views')
    .selectAll()
    .where('workspace_id', '=', access.workspaceId)
    .where((eb) => (person ? eb.or([eb('owner_id', 'is', null), eb('owner_id', '=', person)]) : eb('owner_id', 'is', null)))
    .execute();
  const group = (r: SavedViewsTable) => (r.owner_id === null ? 0 : 1);
  return rows.sort((a, b) => group(a) - group(b) || a.position - b.position || (a.id < b.id ? -1 : 1));
}

export async function listViews(ctx: Pick<Ctx, 'db'>, access: Access) {
  return (await visibleRows(ctx.db, access)).map((r) => formatView(r, access));
}

/** A view the caller sees (404 otherwise, so others' personal views stay secret). */
export async function getView(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<SavedViewsTable> {
  const row = await ctx.db.selectFrom('saved_views').selectAll().where('workspace_id', '=', access.workspaceId).where('id', '=', id).executeTakeFirst();
  if (!row || (row.owner_id !== null && row.owner_id !== me(access))) throw notFound('view');
  return row;
}

function requireEditable(access: Access, ownerId: string | null) {
  if (ownerId === null) authorize(access, 'views:manage_shared');
  else if (ownerId !== me(access)) throw notFound('view');
}

const groupOf = (db: Db, workspaceId: string, ownerId: string | null) =>
  db
    .selectFrom('saved_views')
    .select(['id', 'position'])
    .where('workspace_id', '=', workspaceId)
    .where('owner_id', ownerId === null ? 'is' : '=', ownerId)
    .orderBy('position')
    .orderBy('id')
    .execute();

/** Puts `id` (if given) at `position` (0-based, clamped) within its group and numbers the group 0…n-1. */
async function placeInGroup(db: Db, workspaceId: string, ownerId: string | null, id: string | null, position: number | undefined, now: string) {
  const ids = (await groupOf(db, workspaceId, ownerId)).map((r) => r.id).filter((x) => x !== id);
  if (id) ids.splice(Math.max(0, Math.min(ids.length, position ?? ids.length)), 0, id);
  for (const [i, viewId] of ids.entries()) {
    await db
      .updateTable('saved_views')
      .set({ position: i, ...(viewId === id ? { owner_id: ownerId, updated_at: now } : {}) })
      .where('id', '=', viewId)
      .execute();
  }
}

/** The filter's shape, and its custom field conditions against the workspace's fields (400 naming a bad one). */
async function checkViewFilter(ctx: Pick<Ctx, 'db'>, access: Access, raw: unknown): Promise<ViewFilter> {
  const filters = checkFilter(raw);
  if (filters.custom_fields?.length) await customFieldConditions(ctx.db, access.workspaceId, 'conversation', filters.custom_fields);
  return filters;
}

export async function createView(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, input: ViewInput) {
  const shared = input.shared ?? access.actor.kind !== 'member';
  if (shared) authorize(access, 'views:manage_shared');
  else if (access.actor.kind !== 'member') throw forbidden('an API key has no personal views: make it shared');
  const name = checkName(input.name ?? '');
  const filters = await checkViewFilter(ctx, access, input.filters ?? {});
  const ownerId = shared ? null : me(access);
  const now = iso(ctx.clock.now());
  const id = newId('view');
  await ctx.db.transaction().execute(async (tx) => {
    const group = await groupOf(tx, access.workspaceId, ownerId);
    if (group.length >= MAX_VIEWS) throw invalid(`at most ${MAX_VIEWS} ${shared ? 'shared views per workspace' : 'personal views per member'}`);
    await tx
      .insertInto('saved_views')
      .values({
        id,
        workspace_id: access.workspaceId,
        owner_id: ownerId,
        name,
        filters: JSON.stringify(filters),
        sort: input.sort ?? 'activity',
        position: group.length,
        created_by: me(access),
        created_at: now,
        updated_at: now,
      })
      .execute();
    if (input.position !== undefined) await placeInGroup(tx, access.workspaceId, ownerId, id, input.position, now);
  });
  return formatView(await getView(ctx, access, id), access);
}

export async function updateView(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, id: string, input: ViewInput) {
  const row = await getView(ctx, access, id);
  requireEditable(access, row.owner_id);
  const ownerId = input.shared === undefined ? row.owner_id : input.shared ? null : me(access);
  if (ownerId !== row.owner_id) {
    // Sharing a personal view or taking a shared one back as one's own: managers only, members only.
    authorize(access, 'views:manage_shared');
    if (!input.shared && !ownerId) throw forbidden('an API key has no personal views');
  }
  const set: Partial<SavedViewsTable> = {};
  if (input.name !== undefined) set.name = checkName(input.name);
  if (input.filters !== undefined) set.filters = JSON.stringify(await checkViewFilter(ctx, access, input.filters));
  if (input.sort !== undefined) set.sort = input.sort;
  const now = iso(ctx.clock.now());
  await ctx.db.transaction().execute(async (tx) => {
    if (Object.keys(set).length)
      await tx
        .updateTable('saved_views')
        .set({ ...set, updated_at: now })
        .where('id', '=', id)
        .execute();
    if (ownerId !== row.owner_id || input.position !== undefined) {
      if (ownerId !== row.owner_id && (await groupOf(tx, access.workspaceId, ownerId)).length >= MAX_VIEWS)
        throw invalid(`at most ${MAX_VIEWS} views in a group`);
      await placeInGroup(tx, access.workspaceId, ownerId, id, input.position, now);
      if (ownerId !== row.owner_id) await placeInGroup(tx, access.workspaceId, row.owner_id, null, undefined, now);
    }
  });
  return formatView(await getView(ctx, access, id), access);
}

export async function deleteView(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<void> {
  const row = await getView(ctx, access, id);
  requireEditable(access, row.owner_id);
  await ctx.db.deleteFrom('saved_views').where('id', '=', id).execute();
}

/** The conditions a view applies: its filter, leaving spam out unless it asks for spam. */
export function viewConditions(row: SavedViewsTable): ViewFilter {
  return { spam: false, ...(JSON.parse(row.filters) as ViewFilter) };
}

/** Live counts of every view the caller sees, in sidebar order. */
export async function viewCounts(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access): Promise<{ id: string; count: number }[]> {
  const rows = await visibleRows(ctx.db, access);
  const counts = await countConversations(
    ctx,
    access,
    rows.map((row) => ({ conditions: [viewConditions(row)] })),
  );
  return rows.map((row, i) => ({ id: row.id, count: counts[i] }));
}

/** Workspace deletion: its views, a batch at a time. */
export async function deleteWorkspaceViews(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const ids = (await ctx.db.selectFrom('saved_views').select('id').where('workspace_id', '=', workspaceId).limit(batch).execute()).map((r) => r.id);
  if (!ids.length) return 0;
  return Number((await ctx.db.deleteFrom('saved_views').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
}
