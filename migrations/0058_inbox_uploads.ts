import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Files uploaded for a conversation that does not exist yet (issue 33: POST /v1/conversations takes
// attachment_ids as replies do). An upload belongs to an inbox until the new conversation takes it
// (then it becomes an attachment row with the same id and storage key); unsent ones go after a day.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('inbox_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('filename', 'text', notNull)
    .addColumn('content_type', 'text', notNull)
    .addColumn('size', 'bigint', notNull)
    .addColumn('sha256', 'text', notNull)
    .addColumn('storage_key', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('inbox_uploads_inbox').on('inbox_uploads').columns(['workspace_id', 'inbox_id']).execute();
  await db.schema.createIndex('inbox_uploads_created').on('inbox_uploads').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('inbox_uploads').execute();
}
