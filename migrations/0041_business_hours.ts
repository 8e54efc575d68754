import type { Kysely } from 'kysely';

// Business hours per inbox (issue 35): the weekly schedule (JSON per weekday, null = always open)
// and dated exceptions (JSON), on the inbox's wall clock. Gone with the inbox.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('inbox_hours')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('weekly', 'text')
    .addColumn('exceptions', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('inbox_hours_workspace').on('inbox_hours').column('workspace_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('inbox_hours').execute();
}
