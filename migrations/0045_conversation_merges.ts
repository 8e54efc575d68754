import type { Kysely } from 'kysely';

// Merge and split of conversations (issue 33). A merged conversation stays as a closed stub that
// points to the one it went into (merged_into_id). Every merge and split is recorded with exactly
// the rows it moved (JSON lists of ids), so that a merge can be undone for 24 hours.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('merged_into_id', 'text').execute();
  await db.schema
    .createTable('conversation_moves')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('target_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('moved', 'text', (c) => c.notNull())
    .addColumn('person_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('undone_at', 'text')
    .execute();
  await db.schema.createIndex('conversation_moves_source').on('conversation_moves').columns(['source_id', 'created_at']).execute();
  await db.schema.createIndex('conversation_moves_target').on('conversation_moves').column('target_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('conversation_moves').execute();
  await db.schema.alterTable('conversations').dropColumn('merged_into_id').execute();
}
