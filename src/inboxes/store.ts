// Reads of inboxes for other features: they use these instead of querying the inboxes table
// themselves. Imports no feature, so any may use it. "Live" means not deleted (deleted_at unset).
import { type Expression, expressionBuilder, type SqlBool, sql } from 'kysely';
import type { Database, Db, InboxesTable } from '../db/schema.js';

export type InboxRow = InboxesTable;

/** The inbox, deleted or not. */
export async function findInbox(db: Db, inboxId: string): Promise<InboxRow | undefined> {
  return db.selectFrom('inboxes').selectAll().where('id', '=', inboxId).executeTakeFirst();
}

/** A live inbox of the workspace by id. */
export async function findLiveInbox(db: Db, workspaceId: string, inboxId: string): Promise<InboxRow | undefined> {
  return db
    .selectFrom('inboxes')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', inboxId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** An inbox of the workspace by id or slug; `live` leaves out deleted ones. */
export async function inboxByRef(db: Db, workspaceId: string, ref: string, opts: { live: boolean }): Promise<InboxRow | undefined> {
  let q = db.selectFrom('inboxes').selectAll().where('workspace_id', '=', workspaceId);
  if (opts.live) q = q.where('deleted_at', 'is', null);
  return q.where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)])).executeTakeFirst();
}

/** The ids that name no inbox of the workspace (with `live`, no live one), in the order given. */
export async function missingInboxIds(db: Db, workspaceId: string, inboxIds: readonly string[], opts: { live: boolean }): Promise<string[]> {
  if (inboxIds.length === 0) return [];
  let q = db.selectFrom('inboxes').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', inboxIds);
  if (opts.live) q = q.where('deleted_at', 'is', null);
  const found = new Set((await q.execute()).map((r) => r.id));
  return inboxIds.filter((id) => !found.has(id));
}

/** The live inboxes of the workspaces, oldest first. */
export async function liveInboxesOf(db: Db, workspaceIds: readonly string[]): Promise<InboxRow[]> {
  if (workspaceIds.length === 0) return [];
  return db.selectFrom('inboxes').selectAll().where('workspace_id', 'in', workspaceIds).where('deleted_at', 'is', null).orderBy('id').execute();
}

/** The workspace's inboxes marked deleted whose rows the deletion job has not removed yet (usually none). */
export async function deletedInboxIds(db: Db, workspaceId: string): Promise<string[]> {
  return (await db.selectFrom('inboxes').select('id').where('workspace_id', '=', workspaceId).where('deleted_at', 'is not', null).execute()).map((r) => r.id);
}

/**
 * The ids of the workspace's inboxes marked deleted, as a subquery for another feature's query:
 * `where('inbox_id', 'not in', deletedInboxIdsOf(…))` hides their rows in the same statement.
 */
export function deletedInboxIdsOf(workspaceId: string) {
  return expressionBuilder<Database, never>()
    .selectFrom('inboxes')
    .select('inboxes.id')
    .where('inboxes.workspace_id', '=', workspaceId)
    .where('inboxes.deleted_at', 'is not', null);
}

/**
 * A condition for another feature's query: the inbox its column `inboxIdColumn` (e.g.
 * 'conversations.inbox_id') names is deleted. Used as `where((eb) => eb.not(inboxIsDeleted(…)))`.
 */
export function inboxIsDeleted(inboxIdColumn: string): Expression<SqlBool> {
  const eb = expressionBuilder<Database, never>();
  return eb.exists(
    eb.selectFrom('inboxes').select('inboxes.id').where('inboxes.id', '=', sql.ref<string>(inboxIdColumn)).where('inboxes.deleted_at', 'is not', null),
  );
}
