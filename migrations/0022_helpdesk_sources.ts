import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Help-desk sources (Zendesk, Help Scout): where the API is read from (account), the stored
  // cursor of the provider's export (the resume point after a restart), and the agents seen.
  await db.schema
    .createTable('migration_helpdesk_sources')
    .addColumn('migration_id', 'text', (c) => c.primaryKey().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('account', 'text')
    .addColumn('cursor', 'text')
    .addColumn('pull_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_uid', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('agents', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('pulled_at', 'text')
    .execute();
  // One row per comment/thread read from the help desk, numbered in the order read (the UIDs the
  // scan and the copy address them by); the entry key never repeats, so a page read again after a
  // crash adds nothing.
  await db.schema
    .createTable('migration_helpdesk_entries')
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('uid', 'integer', notNull)
    .addColumn('entry_key', 'text', notNull)
    .addColumn('ticket_id', 'text', notNull)
    .addColumn('sent_at', 'text', notNull)
    .addColumn('data', 'text', notNull)
    .addPrimaryKeyConstraint('migration_helpdesk_entries_pk', ['migration_id', 'uid'])
    .addUniqueConstraint('migration_helpdesk_entries_key', ['migration_id', 'entry_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('migration_helpdesk_entries').execute();
  await db.schema.dropTable('migration_helpdesk_sources').execute();
}
