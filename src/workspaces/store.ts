// Reads of workspaces for other features: they use these instead of querying the workspaces table
// themselves. Imports no feature, so any may use it. "Live" means not deleted (deleted_at unset).
import type { Db, WorkspacesTable } from '../db/schema.js';

export type WorkspaceRow = WorkspacesTable;

/** The workspace, deleted or not. */
export async function findWorkspace(db: Db, workspaceId: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
}

/** The workspace if it is live. */
export async function findLiveWorkspace(db: Db, workspaceId: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).where('deleted_at', 'is', null).executeTakeFirst();
}

/** Which of these workspaces are live. */
export async function liveWorkspaceIds(db: Db, workspaceIds: readonly string[]): Promise<Set<string>> {
  if (workspaceIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('workspaces')
    .select('id')
    .where('id', 'in', [...new Set(workspaceIds)])
    .where('deleted_at', 'is', null)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Live workspaces with retention_days set, by id. */
export async function workspacesWithRetention(db: Db): Promise<{ id: string; retention_days: number }[]> {
  const rows = await db
    .selectFrom('workspaces')
    .select(['id', 'retention_days'])
    .where('retention_days', 'is not', null)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((w) => ({ id: w.id, retention_days: w.retention_days! }));
}

/** Postgres: locks the workspaces' rows until the transaction ends (serializes changes to them). */
export async function lockWorkspaces(trx: Db, workspaceIds: readonly string[]): Promise<void> {
  if (workspaceIds.length === 0) return;
  await trx
    .selectFrom('workspaces')
    .select('id')
    .where('id', 'in', [...workspaceIds])
    .forUpdate()
    .execute();
}
