import type { Kysely } from 'kysely';

// Drafts stored on the server (issue 34): one per member and conversation, restored on any device;
// teammates see that someone is writing. Gone with the conversation or the person.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('drafts')
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('attachment_ids', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('drafts_pk', ['conversation_id', 'person_id'])
    .execute();
  await db.schema.createIndex('drafts_person').on('drafts').column('person_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('drafts').execute();
}
