import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Mailbox migrations, part 1: the migration, the source's folders and messages (the plan of the
// dry run and the copy's progress), threads, the contacts it created and its activity log.
// Imported messages and conversations are ordinary rows of the conversations tables (marked
// imported); the items refer to them by id without foreign keys, so that deleting a conversation
// elsewhere (retention, contact deletion) never touches the migration's record.
export async function up(db: Kysely<any>): Promise<void> {
  // Imported messages keep their original created_at; retention counts from the import.
  await db.schema.alterTable('messages').addColumn('imported_at', 'text').execute();

  await db.schema
    .createTable('mailbox_migrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('state', 'text', notNull)
    .addColumn('provider', 'text', notNull)
    .addColumn('source_address', 'text')
    .addColumn('imap_host', 'text')
    .addColumn('imap_port', 'integer')
    .addColumn('imap_tls', 'text')
    .addColumn('username', 'text')
    .addColumn('password_sealed', 'text')
    .addColumn('credentials_set_at', 'text')
    .addColumn('inbox_id', 'text', (c) => c.references('inboxes.id').onDelete('set null'))
    .addColumn('channel_id', 'text', (c) => c.references('channels.id').onDelete('set null'))
    .addColumn('folders', 'text')
    .addColumn('date_from', 'text')
    .addColumn('date_to', 'text')
    .addColumn('folder_labels', 'text', notNull)
    .addColumn('team_members', 'text', notNull)
    .addColumn('close_after_days', 'integer', notNull)
    .addColumn('skip_automatic', 'integer', notNull)
    .addColumn('keep_originals', 'integer', notNull)
    .addColumn('plan_version', 'integer', notNull)
    .addColumn('scanned_version', 'integer')
    .addColumn('summary', 'text')
    .addColumn('resume_state', 'text')
    .addColumn('attention_reason', 'text')
    .addColumn('attention_message', 'text')
    .addColumn('attention_retry_at', 'text')
    .addColumn('connect_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('blocked_commands', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('copy_started_at', 'text')
    .addColumn('copy_ended_at', 'text')
    .addColumn('ended_at', 'text')
    .addColumn('deleted_at', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('mailbox_migrations_workspace').on('mailbox_migrations').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('mailbox_migration_folders')
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('path', 'text', notNull)
    .addColumn('delimiter', 'text')
    .addColumn('special_use', 'text')
    .addColumn('uid_validity', 'text')
    .addColumn('scanned_uid', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('messages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('uid_next', 'bigint')
    .addColumn('scan_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('mailbox_migration_folders_pk', ['migration_id', 'path'])
    .execute();

  await db.schema
    .createTable('mailbox_migration_items')
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('source_key', 'text', notNull)
    .addColumn('folder', 'text', notNull)
    .addColumn('uid', 'bigint')
    .addColumn('rfc_id', 'text')
    .addColumn('refs', 'text')
    .addColumn('thread_key', 'text')
    .addColumn('sent_at', 'text', notNull)
    .addColumn('size', 'bigint', notNull)
    .addColumn('from_address', 'text')
    .addColumn('from_name', 'text')
    .addColumn('recipients', 'text')
    .addColumn('subject', 'text')
    .addColumn('flags', 'text')
    .addColumn('automatic', 'integer', notNull)
    .addColumn('team', 'integer', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('skip_reason', 'text')
    .addColumn('error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('message_id', 'text')
    .addColumn('conversation_id', 'text')
    .addColumn('copied_at', 'text')
    .addPrimaryKeyConstraint('mailbox_migration_items_pk', ['migration_id', 'source_key'])
    .execute();
  await db.schema.createIndex('mailbox_migration_items_thread').on('mailbox_migration_items').columns(['migration_id', 'thread_key']).execute();
  await db.schema.createIndex('mailbox_migration_items_status').on('mailbox_migration_items').columns(['migration_id', 'status']).execute();
  await db.schema.createIndex('mailbox_migration_items_rfc').on('mailbox_migration_items').columns(['migration_id', 'rfc_id']).execute();
  await db.schema.createIndex('mailbox_migration_items_conversation').on('mailbox_migration_items').columns(['conversation_id']).execute();

  await db.schema
    .createTable('mailbox_migration_threads')
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('thread_key', 'text', notNull)
    .addColumn('newest_at', 'text', notNull)
    .addColumn('messages', 'integer', notNull)
    .addColumn('customer_address', 'text')
    .addColumn('customer_name', 'text')
    .addColumn('subject', 'text')
    .addColumn('status', 'text', notNull)
    .addColumn('skip_reason', 'text')
    .addColumn('conversation_id', 'text')
    .addPrimaryKeyConstraint('mailbox_migration_threads_pk', ['migration_id', 'thread_key'])
    .execute();
  await db.schema.createIndex('mailbox_migration_threads_order').on('mailbox_migration_threads').columns(['migration_id', 'status', 'newest_at']).execute();

  await db.schema
    .createTable('mailbox_migration_contacts')
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('contact_id', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('mailbox_migration_contacts_pk', ['migration_id', 'contact_id'])
    .execute();

  await db.schema
    .createTable('mailbox_migration_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('at', 'text', notNull)
    .addColumn('actor_type', 'text', notNull)
    .addColumn('actor_id', 'text')
    .addColumn('action', 'text', notNull)
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('mailbox_migration_log_migration').on('mailbox_migration_log').columns(['migration_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'mailbox_migration_log',
    'mailbox_migration_contacts',
    'mailbox_migration_threads',
    'mailbox_migration_items',
    'mailbox_migration_folders',
    'mailbox_migrations',
  ]) {
    await db.schema.dropTable(t).execute();
  }
  await db.schema.alterTable('messages').dropColumn('imported_at').execute();
}
