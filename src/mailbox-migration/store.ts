// Queries of migrations shared by the service, the jobs and the routes: reading a migration, its
// progress counts, the activity log, and recording what happened (log line and realtime events in
// the caller's transaction).
import { sql } from 'kysely';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { isPostgres } from '../db/dialect.js';
import type { Db, MailboxMigrationsTable, MigrationItemStatus } from '../db/schema.js';
import { recordEvent } from '../events/service.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { checkWindow, type DbWindow, windowStart } from '../platform/rate-limit.js';

export type MigrationRow = MailboxMigrationsTable;
export type Tx = { db: Db; clock: Clock };

/** Who did something, as the activity log records it. */
export type Actor = { type: 'member' | 'api_key' | 'system'; id: string | null };

export const SYSTEM: Actor = { type: 'system', id: null };

export function actorOf(access: Access): Actor {
  return access.actor.kind === 'member' ? { type: 'member', id: access.actor.personId } : { type: 'api_key', id: access.actor.keyId };
}

export async function findMigration(db: Db, workspaceId: string, id: string): Promise<MigrationRow | undefined> {
  return db
    .selectFrom('mailbox_migrations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function getMigration(db: Db, workspaceId: string, id: string): Promise<MigrationRow> {
  const row = await findMigration(db, workspaceId, id);
  if (!row) throw notFound('migration');
  return row;
}

/** The migration row locked for the rest of the transaction (Postgres; SQLite transactions are serialized). */
export async function lockMigration(db: Db, id: string): Promise<MigrationRow | undefined> {
  let q = db.selectFrom('mailbox_migrations').selectAll().where('id', '=', id);
  if (isPostgres(db as never)) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function saveMigration(tx: Tx, row: MigrationRow, changes: Partial<MigrationRow>): Promise<MigrationRow> {
  const set = { ...changes, updated_at: iso(tx.clock.now()) };
  await tx.db.updateTable('mailbox_migrations').set(set).where('id', '=', row.id).execute();
  if (changes.password_sealed === null) {
    // The credentials go (the migration ended): so does what was read from a help desk with them.
    await tx.db.deleteFrom('migration_helpdesk_entries').where('migration_id', '=', row.id).execute();
    await tx.db.deleteFrom('migration_helpdesk_sources').where('migration_id', '=', row.id).execute();
  }
  return { ...row, ...set };
}

/** A credentials link is used up once its mailbox connected (not again if it already was). */
export async function markCredentialLinkUsed(ctx: Ctx, linkId: string): Promise<void> {
  await ctx.db
    .updateTable('migration_credential_links')
    .set({ used_at: iso(ctx.clock.now()) })
    .where('id', '=', linkId)
    .where('used_at', 'is', null)
    .execute();
}

export async function logActivity(
  tx: Tx,
  m: Pick<MigrationRow, 'id' | 'workspace_id'>,
  actor: Actor,
  action: string,
  detail?: Record<string, unknown>,
): Promise<void> {
  const now = tx.clock.now();
  await tx.db
    .insertInto('mailbox_migration_log')
    .values({
      id: newId('mlog', now.getTime()),
      migration_id: m.id,
      workspace_id: m.workspace_id,
      at: iso(now),
      actor_type: actor.type,
      actor_id: actor.id,
      action,
      detail: detail ? JSON.stringify(detail) : null,
    })
    .execute();
}

/** A limit counted in the activity log (it holds across restarts): 429 once the migration has `w.limit` lines of `action` within the window. */
export async function checkLogWindow(tx: Tx, migrationId: string, action: string, w: DbWindow): Promise<void> {
  const recent = await tx.db
    .selectFrom('mailbox_migration_log')
    .select('at')
    .where('migration_id', '=', migrationId)
    .where('action', '=', action)
    .where('at', '>', windowStart(tx.clock, w))
    .orderBy('at')
    .execute();
  checkWindow(
    tx.clock,
    w,
    recent.map((r) => r.at),
  );
}

export interface Progress {
  /** Every message of the chosen folders (duplicates and skipped ones included). */
  total: number;
  planned: number;
  copied: number;
  skipped: number;
  duplicates: number;
  failed: number;
  conversations: number;
  copied_bytes: number;
  percent: number;
}

/** The history's items by status, counted from the status index alone (migration 0030). */
export function itemCountsQuery(db: Db, migrationId: string) {
  return (
    db
      .selectFrom('mailbox_migration_items')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('size').as('bytes')])
      .where('migration_id', '=', migrationId)
      // New mail read from the old mailbox while syncing is not history (see sync.ts).
      .where('new_mail', '=', 0)
      .groupBy('status')
  );
}

export async function loadProgress(db: Db, migrationId: string): Promise<Progress> {
  const rows = await itemCountsQuery(db, migrationId).execute();
  const by = new Map<MigrationItemStatus, { n: number; bytes: number }>(rows.map((r) => [r.status, { n: Number(r.n), bytes: Number(r.bytes ?? 0) }]));
  const n = (s: MigrationItemStatus) => by.get(s)?.n ?? 0;
  const conversations = await db
    .selectFrom('mailbox_migration_threads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('migration_id', '=', migrationId)
    .where('status', '=', 'copied')
    .executeTakeFirst();
  return progressOf({
    planned: n('planned'),
    copied: n('copied'),
    skipped: n('skipped'),
    duplicates: n('duplicate'),
    failed: n('failed'),
    conversations: Number(conversations?.n ?? 0),
    copied_bytes: by.get('copied')?.bytes ?? 0,
  });
}

type ProgressCounts = Omit<Progress, 'total' | 'percent'>;

function progressOf(c: ProgressCounts): Progress {
  const total = c.planned + c.copied + c.skipped + c.duplicates + c.failed;
  const toCopy = c.planned + c.copied + c.failed;
  return { total, ...c, percent: toCopy === 0 ? (total > 0 ? 100 : 0) : Math.floor((c.copied * 100) / toCopy) };
}

/** What a copy batch changed: planned items it copied, found stored already, could not read or found gone, and threads it copied. */
export interface ProgressChange {
  copied: number;
  copied_bytes: number;
  duplicates: number;
  failed: number;
  skipped: number;
  conversations: number;
}

/** loadProgress after a batch that changed only planned items and threads (as `change` says), without counting again. */
export function progressAfter(p: Progress, change: ProgressChange): Progress {
  const settled = change.copied + change.duplicates + change.failed + change.skipped;
  return progressOf({
    planned: p.planned - settled,
    copied: p.copied + change.copied,
    skipped: p.skipped + change.skipped,
    duplicates: p.duplicates + change.duplicates,
    failed: p.failed + change.failed,
    conversations: p.conversations + change.conversations,
    copied_bytes: p.copied_bytes + change.copied_bytes,
  });
}

/** Records migration.updated (owners and admins only, never webhooks) in the caller's transaction. */
export async function recordMigrationUpdated(tx: Tx, m: MigrationRow, data: Record<string, unknown>): Promise<void> {
  await recordEvent(tx, { workspaceId: m.workspace_id, type: 'migration.updated', occurredAt: tx.clock.now(), data, webhook: false });
}

export async function recordMigrationProgress(tx: Tx, m: MigrationRow, progress: Progress): Promise<void> {
  await recordEvent(tx, {
    workspaceId: m.workspace_id,
    type: 'migration.progress',
    occurredAt: tx.clock.now(),
    data: { migration_id: m.id, state: m.state, progress },
    webhook: false,
  });
}

/** Counts rows of a query quickly on both dialects. */
export async function countWhere(
  db: Db,
  table: 'mailbox_migration_items' | 'mailbox_migration_threads',
  migrationId: string,
  status?: string,
): Promise<number> {
  let q = db.selectFrom(table).select(sql<number>`count(*)`.as('n')).where('migration_id', '=', migrationId);
  if (status) q = q.where('status', '=', status as never);
  const row = await q.executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Migrations copying history into an inbox now (copying, paused or stopped for attention): the inbox banner. */
export async function copiesInProgress(db: Db, workspaceId: string): Promise<Pick<MigrationRow, 'id' | 'inbox_id' | 'state'>[]> {
  return db
    .selectFrom('mailbox_migrations')
    .select(['id', 'inbox_id', 'state'])
    .where('workspace_id', '=', workspaceId)
    .where('state', 'in', ['copying', 'paused', 'needs_attention'])
    .where('copy_ended_at', 'is', null)
    .execute();
}

/** Migrations not ended yet (not completed, cancelled, removing or removed) that use this e-mail channel. */
export async function unfinishedMigrationsThrough(db: Db, channelId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('mailbox_migrations')
    .select('id')
    .where('channel_id', '=', channelId)
    .where('deleted_at', 'is', null)
    .where('state', 'not in', ['completed', 'cancelled', 'removing', 'removed'])
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Whether a migration into the inbox is under way (copying through syncing): its old mailbox is
 * still the live one, so new mail gets no inbox greeting (the spec: "without the inbox greeting").
 */
export async function migrationUnderwayInto(db: Db, inboxId: string): Promise<boolean> {
  const row = await db
    .selectFrom('mailbox_migrations')
    .select('id')
    .where('inbox_id', '=', inboxId)
    .where('deleted_at', 'is', null)
    .where('state', 'in', ['copying', 'paused', 'needs_attention', 'syncing'])
    .limit(1)
    .executeTakeFirst();
  return !!row;
}
