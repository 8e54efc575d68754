import { type Kysely, sql } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // What the panel's conversation list shows without reading messages: the start of the latest
  // message, and when the customer last wrote (unread state). Imported mail never sets the latter.
  await db.schema.alterTable('conversations').addColumn('preview', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('last_inbound_at', 'text').execute();
  await sql`update conversations set preview = (
      select substr(m.body, 1, 200) from messages m
      where m.conversation_id = conversations.id and m.kind = 'message'
      order by m.created_at desc, m.id desc limit 1)`.execute(db);
  await sql`update conversations set last_inbound_at = (
      select max(m.created_at) from messages m
      where m.conversation_id = conversations.id and m.kind = 'message' and m.direction = 'in' and m.imported_at is null)`.execute(db);
  // Lists sorted by last activity.
  await db.schema.createIndex('conversations_workspace_activity').on('conversations').columns(['workspace_id', 'last_message_at', 'id']).execute();

  // When each member last opened each conversation.
  await db.schema
    .createTable('conversation_reads')
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('read_at', 'text', notNull)
    .addPrimaryKeyConstraint('conversation_reads_pk', ['conversation_id', 'person_id'])
    .execute();
  await db.schema.createIndex('conversation_reads_person').on('conversation_reads').column('person_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('conversation_reads').execute();
  await db.schema.dropIndex('conversations_workspace_activity').execute();
  await db.schema.alterTable('conversations').dropColumn('last_inbound_at').execute();
  await db.schema.alterTable('conversations').dropColumn('preview').execute();
}
