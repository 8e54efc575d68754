// Whether workspaces are deleted, for features that keep rows of a workspace and stop working for
// it once it is deleted (the deletion job removes the rows later).
import { type Expression, expressionBuilder, type SqlBool, sql } from 'kysely';
import type { Database, Db } from '../db/schema.js';

/** The workspace's deleted_at (null while live), or undefined when there is no such workspace. */
export async function workspaceDeletedAt(db: Db, workspaceId: string): Promise<string | null | undefined> {
  const row = await db.selectFrom('workspaces').select('deleted_at').where('id', '=', workspaceId).executeTakeFirst();
  return row ? row.deleted_at : undefined;
}

/** deleted_at of those of these workspaces that exist (null while live). */
export async function workspacesDeletedAt(db: Db, workspaceIds: readonly string[]): Promise<Map<string, string | null>> {
  if (workspaceIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('workspaces')
    .select(['id', 'deleted_at'])
    .where('id', 'in', [...new Set(workspaceIds)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.deleted_at]));
}

/** True when the workspace the column `workspaceIdColumn` names exists and is not deleted. Used as `where(workspaceIsLive(…))`. */
export function workspaceIsLive(workspaceIdColumn: string): Expression<SqlBool> {
  const eb = expressionBuilder<Database, never>();
  return eb.exists(
    eb
      .selectFrom('workspaces')
      .select('workspaces.id')
      .where('workspaces.id', '=', sql.ref<string>(workspaceIdColumn))
      .where('workspaces.deleted_at', 'is', null),
  );
}
