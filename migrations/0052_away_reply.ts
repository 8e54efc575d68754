import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Out-of-office reply (issue 35): per inbox, an automatic answer to a customer's mail that arrives
// outside the inbox's business hours. Its log is the greeting's (`greetings_sent`, now with a
// `kind`): once per contact per kind in 24 hours, and a conversation may get several away replies.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('inbox_away_replies')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('enabled', 'integer', notNull)
    .addColumn('text_en', 'text', notNull)
    .addColumn('text_tr', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('inbox_away_replies_workspace').on('inbox_away_replies').column('workspace_id').execute();

  await db.schema
    .alterTable('greetings_sent')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('greeting'))
    .execute();
  await db.schema.dropIndex('greetings_sent_conversation').execute();
  await db.schema.createIndex('greetings_sent_conversation').on('greetings_sent').columns(['conversation_id', 'kind']).execute();
  await db.schema.dropIndex('greetings_sent_contact').execute();
  await db.schema.createIndex('greetings_sent_contact').on('greetings_sent').columns(['contact_id', 'kind', 'sent_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('greetings_sent').where('kind', '<>', 'greeting').execute();
  await db.schema.dropIndex('greetings_sent_contact').execute();
  await db.schema.createIndex('greetings_sent_contact').on('greetings_sent').columns(['contact_id', 'sent_at']).execute();
  await db.schema.dropIndex('greetings_sent_conversation').execute();
  await db.schema.createIndex('greetings_sent_conversation').on('greetings_sent').column('conversation_id').unique().execute();
  await db.schema.alterTable('greetings_sent').dropColumn('kind').execute();
  await db.schema.dropTable('inbox_away_replies').execute();
}
