import type { Kysely } from 'kysely';

// Channels that read their own mailbox (issue 38): how to reach it (the password sealed under the
// master key), the reader's state shown on the channel, the lease that lets one process read it,
// and per folder the UIDVALIDITY and the last UID taken, so nothing is read twice or missed.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mailbox_readers')
    .addColumn('channel_id', 'text', (c) => c.primaryKey().references('channels.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('host', 'text')
    .addColumn('port', 'integer')
    .addColumn('tls', 'text')
    .addColumn('username', 'text')
    .addColumn('password_sealed', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('mode', 'text')
    .addColumn('error_step', 'text')
    .addColumn('error_message', 'text')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_at', 'text')
    .addColumn('last_read_at', 'text')
    .addColumn('connected_at', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mailbox_readers_workspace').on('mailbox_readers').column('workspace_id').execute();
  await db.schema
    .createTable('mailbox_reader_folders')
    .addColumn('channel_id', 'text', (c) => c.notNull().references('mailbox_readers.channel_id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('uid_validity', 'text', (c) => c.notNull())
    .addColumn('last_uid', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mailbox_reader_folders_pk', ['channel_id', 'role'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mailbox_reader_folders').execute();
  await db.schema.dropTable('mailbox_readers').execute();
}
