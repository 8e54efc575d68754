// The reader's rows: its settings and state (mailbox_readers), the lease one process holds while it
// reads, and per folder the UIDVALIDITY and last UID taken (mailbox_reader_folders). A completed
// migration with keep_reading writes both (src/mailbox-migration/switching/handover.ts): its
// password and the folders' starting points from its sync, so the reader begins where it stopped.
import type { Db, MailboxReaderFoldersTable, MailboxReadersTable } from '../db/schema.js';

export type ReaderRow = MailboxReadersTable;
export type FolderRow = MailboxReaderFoldersTable;

/** How long a lease lasts without renewal; a process renews it every third of that. */
export const LEASE_MS = 30_000;

export async function findReader(db: Db, channelId: string): Promise<ReaderRow | undefined> {
  return db.selectFrom('mailbox_readers').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
}

export async function readersOf(db: Db, channelIds: readonly string[]): Promise<Map<string, ReaderRow>> {
  if (channelIds.length === 0) return new Map();
  const rows = await db.selectFrom('mailbox_readers').selectAll().where('channel_id', 'in', channelIds).execute();
  return new Map(rows.map((r) => [r.channel_id, r]));
}

export async function saveReader(db: Db, row: ReaderRow): Promise<void> {
  const { channel_id, ...rest } = row;
  await db
    .insertInto('mailbox_readers')
    .values(row)
    .onConflict((oc) => oc.column('channel_id').doUpdateSet(rest))
    .execute();
}

export async function deleteReader(db: Db, channelId: string): Promise<void> {
  await db.deleteFrom('mailbox_reader_folders').where('channel_id', '=', channelId).execute();
  await db.deleteFrom('mailbox_readers').where('channel_id', '=', channelId).execute();
}

export async function deleteFolders(db: Db, channelId: string): Promise<void> {
  await db.deleteFrom('mailbox_reader_folders').where('channel_id', '=', channelId).execute();
}

/** Readers this process may take now: no live lease of another process, and not waiting to retry. */
export async function readersDue(db: Db, nowIso: string, owner: string): Promise<ReaderRow[]> {
  return db
    .selectFrom('mailbox_readers')
    .selectAll()
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso), eb('lease_owner', '=', owner)]))
    .where((eb) => eb.or([eb('retry_at', 'is', null), eb('retry_at', '<=', nowIso)]))
    .orderBy('channel_id')
    .limit(500)
    .execute();
}

/**
 * In the transaction that stores a new sign-in of the channel: a reader of the sign-in that waits to
 * retry tries again now, shown as connecting (not the error the old sign-in caused) until it has.
 */
export async function retrySignInReaderNow(db: Db, channelId: string): Promise<void> {
  await db
    .updateTable('mailbox_readers')
    .set({ state: 'connecting', mode: null, error_step: null, error_message: null, retry_at: null, failures: 0 })
    .where('channel_id', '=', channelId)
    .where('kind', '!=', 'imap')
    .where('state', '=', 'needs_attention')
    .execute();
}

/** Takes (or keeps) the lease; true when this process holds it now. */
export async function claimLease(db: Db, channelId: string, owner: string, nowIso: string, untilIso: string): Promise<boolean> {
  const r = await db
    .updateTable('mailbox_readers')
    .set({ lease_owner: owner, lease_until: untilIso })
    .where('channel_id', '=', channelId)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso), eb('lease_owner', '=', owner)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Renews the leases this process holds; answers the rows it still holds (with their settings' time). */
export async function renewLeases(db: Db, channelIds: readonly string[], owner: string, untilIso: string): Promise<Map<string, string>> {
  if (channelIds.length === 0) return new Map();
  await db.updateTable('mailbox_readers').set({ lease_until: untilIso }).where('channel_id', 'in', channelIds).where('lease_owner', '=', owner).execute();
  const rows = await db
    .selectFrom('mailbox_readers')
    .select(['channel_id', 'updated_at'])
    .where('channel_id', 'in', channelIds)
    .where('lease_owner', '=', owner)
    .execute();
  return new Map(rows.map((r) => [r.channel_id, r.updated_at]));
}

export async function releaseLease(db: Db, channelId: string, owner: string): Promise<void> {
  await db
    .updateTable('mailbox_readers')
    .set({ lease_owner: null, lease_until: null })
    .where('channel_id', '=', channelId)
    .where('lease_owner', '=', owner)
    .execute();
}

/** Leases left by processes that died: freed at start when this server is alone on the database. */
export async function releaseAllLeases(db: Db): Promise<void> {
  await db.updateTable('mailbox_readers').set({ lease_owner: null, lease_until: null }).where('lease_owner', 'is not', null).execute();
}

/** The reader's state columns, written only while this process holds the lease. */
export async function setReaderState(
  db: Db,
  channelId: string,
  owner: string,
  set: Partial<Pick<ReaderRow, 'state' | 'mode' | 'error_step' | 'error_message' | 'failures' | 'retry_at' | 'last_read_at' | 'connected_at'>>,
): Promise<boolean> {
  const r = await db.updateTable('mailbox_readers').set(set).where('channel_id', '=', channelId).where('lease_owner', '=', owner).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function findFolder(db: Db, channelId: string, role: FolderRow['role']): Promise<FolderRow | undefined> {
  return db.selectFrom('mailbox_reader_folders').selectAll().where('channel_id', '=', channelId).where('role', '=', role).executeTakeFirst();
}

export async function saveFolder(db: Db, row: FolderRow): Promise<void> {
  const { channel_id, role, ...rest } = row;
  await db
    .insertInto('mailbox_reader_folders')
    .values(row)
    .onConflict((oc) => oc.columns(['channel_id', 'role']).doUpdateSet(rest))
    .execute();
}

/** Moves a folder's last UID forward (never back: two sessions of one reader cannot undo each other). */
export async function advanceFolder(db: Db, channelId: string, role: FolderRow['role'], uidValidity: string, uid: number, nowIso: string): Promise<void> {
  await db
    .updateTable('mailbox_reader_folders')
    .set({ last_uid: uid, updated_at: nowIso })
    .where('channel_id', '=', channelId)
    .where('role', '=', role)
    .where('uid_validity', '=', uidValidity)
    .where('last_uid', '<', uid)
    .execute();
}

export async function deleteWorkspaceReaders(db: Db, workspaceId: string, batch: number): Promise<number> {
  const ids = (await db.selectFrom('mailbox_readers').select('channel_id').where('workspace_id', '=', workspaceId).limit(batch).execute()).map(
    (r) => r.channel_id,
  );
  if (ids.length === 0) return 0;
  await db.deleteFrom('mailbox_reader_folders').where('channel_id', 'in', ids).execute();
  await db.deleteFrom('mailbox_readers').where('channel_id', 'in', ids).execute();
  return ids.length;
}
