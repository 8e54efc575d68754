import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // A deleted inbox is marked at once (it stops receiving; its slug is freed) and removed by the
  // inbox deletion job after its conversations and files.
  await db.schema.alterTable('inboxes').addColumn('deleted_at', 'text').execute();

  // One row per inbox deletion: the job's progress, kept after the inbox row is gone.
  await db.schema
    .createTable('inbox_deletions')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('requested_at', 'text', notNull)
    .addColumn('requested_by', 'text', notNull) // a person id or an API key id
    .addColumn('conversations_deleted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('files_deleted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('finished_at', 'text')
    .execute();

  // SMTP connection tests of e-mail channels: the rate limit counts them (and the last result stays).
  await db.schema
    .createTable('channel_smtp_tests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('at', 'text', notNull)
    .addColumn('ok', 'integer', notNull)
    .addColumn('failed_step', 'text')
    .execute();
  await db.schema.createIndex('channel_smtp_tests_channel').on('channel_smtp_tests').columns(['channel_id', 'at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('channel_smtp_tests').execute();
  await db.schema.dropTable('inbox_deletions').execute();
  await db.schema.alterTable('inboxes').dropColumn('deleted_at').execute();
}
