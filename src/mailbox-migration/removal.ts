// Remove imported history (spec: Migration feature rules › Remove imported history): allowed once
// the migration is completed or cancelled, with confirm_count equal to the number shown. The
// migration is `removing` (a stored state, so a restart continues) while the worker deletes, in
// small transactions, the imported conversations nobody wrote in since (messages, files), then the
// contacts the migration created that are left without a conversation; then it is `removed`.
// Conversations the team (or a customer) wrote in since stay, labels stay, the old mailbox is
// never touched.
import type { Access } from '../auth/access.js';
import { contactIsUnlinked, deleteUnlinkedContacts } from '../contacts/imported.js';
import type { Ctx } from '../context.js';
import { deleteConversationsWithFiles } from '../conversations/files.js';
import { contactHasNoConversationOrMessage, countUnwrittenImported, unwrittenImportedIds } from '../conversations/imported.js';
import type { Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import { conflict } from '../platform/errors.js';
import { formatMigration } from './format.js';
import { loadProgress, lockMigration, logActivity, type MigrationRow, recordMigrationUpdated, SYSTEM, saveMigration } from './store.js';
import type { ActRunner } from './switching/service.js';

/** Conversations (and contacts) deleted per transaction. */
export const REMOVAL_BATCH = 50;

interface RemovalRecord {
  confirm_count: number;
  conversations_deleted: number;
  contacts_deleted: number;
  files_deleted: number;
}

/** The conversations the migration's threads went into (removable while nobody wrote in them since the import). */
function threadConversations(db: Db, m: Pick<MigrationRow, 'id'>) {
  return db.selectFrom('mailbox_migration_threads').select('conversation_id').where('migration_id', '=', m.id).where('conversation_id', 'is not', null);
}

/** The number remove-history asks to confirm: the imported conversations it would delete. */
export async function removalCount(db: Db, m: Pick<MigrationRow, 'id' | 'workspace_id'>): Promise<number> {
  return countUnwrittenImported(db, m.workspace_id, threadConversations(db, m));
}

/** POST …/remove-history: checks confirm_count and moves the migration to removing. */
export async function removeHistory(ctx: Ctx, access: Access, id: string, input: { confirm_count: number }, act: ActRunner) {
  return act(ctx, access, id, 'remove_history', async (m, tx) => {
    const count = await removalCount(tx.db, m);
    if (input.confirm_count !== count) {
      throw conflict(`confirm_count must be ${count}, the number of imported conversations that will be deleted`, 'confirm_count_mismatch', {
        confirm_count: count,
      });
    }
    const record: RemovalRecord = { confirm_count: count, conversations_deleted: 0, contacts_deleted: 0, files_deleted: 0 };
    return {
      set: { state: 'removing', removal: JSON.stringify(record), password_sealed: null },
      log: 'remove_history_started',
      detail: { confirm_count: count },
    };
  });
}

/** Contacts the migration created that have no conversation and wrote no message (nor were linked to an external id). */
function leftoverContacts(db: Db, m: Pick<MigrationRow, 'id' | 'workspace_id'>) {
  return db
    .selectFrom('mailbox_migration_contacts as mc')
    .select('mc.contact_id')
    .where('mc.migration_id', '=', m.id)
    .where(contactIsUnlinked(m.workspace_id, 'mc.contact_id'))
    .where(contactHasNoConversationOrMessage('mc.contact_id'));
}

/** One step of removing: a batch of conversations, else of contacts, else the end. Returns true when done. */
export async function removalStep(ctx: Ctx, migrationId: string): Promise<boolean> {
  const done = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const m = await lockMigration(trx, migrationId);
    if (!m || m.state !== 'removing') return true;
    const record = JSON.parse(m.removal ?? '{}') as RemovalRecord;
    // A batch done: its counts are kept and the step runs again for the next one.
    const batchDone = async () => {
      await trx
        .updateTable('mailbox_migrations')
        .set({ removal: JSON.stringify(record) })
        .where('id', '=', m.id)
        .execute();
      return false;
    };
    const conversations = await unwrittenImportedIds(trx, m.workspace_id, threadConversations(trx, m), REMOVAL_BATCH);
    if (conversations.length) {
      const r = await deleteConversationsWithFiles(tx, conversations);
      record.conversations_deleted += r.conversations;
      record.files_deleted += r.files;
      return batchDone();
    }
    const contacts = (await leftoverContacts(trx, m).orderBy('mc.contact_id').limit(REMOVAL_BATCH).execute()).map((r) => r.contact_id);
    if (contacts.length) {
      await deleteUnlinkedContacts(trx, contacts);
      record.contacts_deleted += contacts.length;
      return batchDone();
    }
    const next = await saveMigration(tx, m, { state: 'removed', removal: JSON.stringify(record) });
    await logActivity(tx, next, SYSTEM, 'history_removed', { ...record });
    await recordMigrationUpdated(tx, next, { migration: formatMigration(next, await loadProgress(trx, next.id)) });
    return true;
  });
  if (done) announceEvents(ctx);
  return done;
}
