import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // An export-file upload being processed (or processed) in the background after `complete`:
  // phase, progress and outcome for GET …/upload, and the claim of the run processing it.
  await db.schema
    .createTable('mailbox_migration_uploads')
    .addColumn('migration_id', 'text', (c) => c.primaryKey().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('state', 'text', notNull) // processing | read | failed
    .addColumn('phase', 'text') // verifying | reading
    .addColumn('parts', 'integer', notNull)
    .addColumn('bytes', 'bigint', notNull)
    .addColumn('expected_sha256', 'text')
    .addColumn('sha256', 'text')
    .addColumn('done_bytes', 'bigint', notNull)
    .addColumn('total_bytes', 'bigint', notNull)
    .addColumn('messages', 'integer', notNull)
    .addColumn('error_reason', 'text')
    .addColumn('error_message', 'text')
    .addColumn('actor_type', 'text', notNull)
    .addColumn('actor_id', 'text')
    .addColumn('runner', 'text')
    .addColumn('runner_until', 'text')
    .addColumn('started_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addColumn('finished_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mailbox_migration_uploads').execute();
}
