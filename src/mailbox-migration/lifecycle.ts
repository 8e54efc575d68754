// What migrations add to the data lifecycle (src/lifecycle/registry.ts):
//  - the activity log is kept SVC_MIGRATION_AUDIT_DAYS after the migration ends; a deleted
//    migration's whole record goes then too;
//  - (imported mail ages from the day of the import through the conversation rules themselves:
//    conversations.imported_at and messages.raw_stored_at are the import time; see
//    src/conversations/retention.ts);
//  - a deleted workspace's migrations (with their sealed passwords, at the first batch) are removed;
//  - credentials links (sources/credential-links.ts) are removed a day after they expired.
import { sql } from 'kysely';
import type { Ctx } from '../context.js';
import { DAY, iso } from '../platform/clock.js';
import type { RetentionRule, WorkspaceDataStep } from '../platform/lifecycle.js';

/** Deletes at most `batch` rows of a migration's dependent tables, children first; returns how many. */
async function deleteMigrationRows(ctx: Pick<Ctx, 'db'>, migrationIds: string[], batch: number): Promise<number> {
  let deleted = 0;
  for (const table of [
    'mailbox_migration_items',
    'mailbox_migration_threads',
    'mailbox_migration_folders',
    'mailbox_migration_contacts',
    'mailbox_migration_log',
  ] as const) {
    if (deleted >= batch || migrationIds.length === 0) break;
    const limit = batch - deleted;
    // Portable batched delete: pick a page of keys, then delete them.
    const keyCols: Record<typeof table, string[]> = {
      mailbox_migration_items: ['migration_id', 'source_key'],
      mailbox_migration_threads: ['migration_id', 'thread_key'],
      mailbox_migration_folders: ['migration_id', 'path'],
      mailbox_migration_contacts: ['migration_id', 'contact_id'],
      mailbox_migration_log: ['migration_id', 'id'],
    };
    const [, second] = keyCols[table];
    const rows = (await ctx.db
      .selectFrom(table)
      .select(['migration_id', second as never])
      .where('migration_id', 'in', migrationIds)
      .limit(limit)
      .execute()) as unknown as Record<string, string>[];
    for (const mid of new Set(rows.map((r) => r.migration_id))) {
      const keys = rows.filter((r) => r.migration_id === mid).map((r) => r[second]);
      for (let i = 0; i < keys.length; i += 500) {
        const res = await ctx.db
          .deleteFrom(table)
          .where('migration_id', '=', mid)
          .where(second as never, 'in', keys.slice(i, i + 500) as never)
          .executeTakeFirst();
        deleted += Number(res.numDeletedRows);
      }
    }
  }
  return deleted;
}

/** Activity logs of migrations that ended more than SVC_MIGRATION_AUDIT_DAYS ago; deleted migrations go whole. */
export const migrationAuditRule: RetentionRule = {
  name: 'migration_activity',
  async deleteBatch(ctx, now, batch) {
    const cutoff = iso(now.getTime() - ctx.config.migration.auditDays * DAY);
    const ended = await ctx.db
      .selectFrom('mailbox_migrations')
      .select(['id', 'deleted_at'])
      .where('ended_at', 'is not', null)
      .where('ended_at', '<', cutoff)
      .orderBy('ended_at')
      .limit(100)
      .execute();
    if (ended.length === 0) return 0;
    let deleted = 0;
    // The log of every migration past the audit period.
    const logs = await ctx.db
      .selectFrom('mailbox_migration_log')
      .select('id')
      .where(
        'migration_id',
        'in',
        ended.map((e) => e.id),
      )
      .limit(batch)
      .execute();
    for (let i = 0; i < logs.length; i += 500) {
      const r = await ctx.db
        .deleteFrom('mailbox_migration_log')
        .where(
          'id',
          'in',
          logs.slice(i, i + 500).map((l) => l.id),
        )
        .executeTakeFirst();
      deleted += Number(r.numDeletedRows);
    }
    // Deleted migrations: their whole record, in batches, then the row once nothing is left.
    const gone = ended.filter((e) => e.deleted_at !== null).map((e) => e.id);
    if (gone.length && deleted < batch) {
      const budget = batch - deleted;
      const rows = await deleteMigrationRows(ctx, gone, budget);
      deleted += rows;
      if (rows < budget) {
        const r = await ctx.db.deleteFrom('mailbox_migrations').where('id', 'in', gone).executeTakeFirst();
        deleted += Number(r.numDeletedRows);
      }
    }
    return deleted;
  },
};

/** A deleted workspace's migrations: the passwords at once (first batch), then the rows in batches. */
export const migrationWorkspaceStep: WorkspaceDataStep = {
  name: 'mailbox_migrations',
  async deleteBatch(ctx, workspaceId, batch) {
    await ctx.db
      .updateTable('mailbox_migrations')
      .set({ password_sealed: null, state: 'cancelled', ended_at: iso(ctx.clock.now()) })
      .where('workspace_id', '=', workspaceId)
      .where('password_sealed', 'is not', null)
      .execute();
    await ctx.db
      .deleteFrom('jobs')
      .where('unique_key', 'like', 'migration:%')
      .where('unique_key', 'in', (eb) =>
        eb.selectFrom('mailbox_migrations').select(sql<string>`'migration:' || id`.as('k')).where('workspace_id', '=', workspaceId),
      )
      .execute();
    const ids = (await ctx.db.selectFrom('mailbox_migrations').select('id').where('workspace_id', '=', workspaceId).limit(50).execute()).map((r) => r.id);
    if (ids.length === 0) return { rows: 0, files: 0 };
    const rows = await deleteMigrationRows(ctx, ids, batch);
    if (rows > 0) return { rows, files: 0 };
    const r = await ctx.db.deleteFrom('mailbox_migrations').where('id', 'in', ids).executeTakeFirst();
    return { rows: Number(r.numDeletedRows), files: 0 };
  },
};

/** Expired credentials links are kept this long (their row says when a link was made and used), then removed. */
export const CREDENTIALS_LINK_KEEP_MS = DAY;

/** Credentials links a day past their expiry (used or not). */
export const credentialLinksRule: RetentionRule = {
  name: 'migration_credential_links',
  async deleteBatch(ctx, now, batch) {
    const r = await ctx.db
      .deleteFrom('migration_credential_links')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('migration_credential_links as l')
          .select('l.id')
          .where('l.expires_at', '<=', iso(now.getTime() - CREDENTIALS_LINK_KEEP_MS))
          .limit(batch),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },
};
