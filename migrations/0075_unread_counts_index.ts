import type { Kysely } from 'kysely';

// The overview's unread counts (open conversations with a customer message the member has not
// read, per inbox and assignee) read every open conversation's row from the table for
// `last_inbound_at` and `id`: 34–55 ms at 5,500 open conversations (bench/panel-api, SQLite),
// 7 ms from an index that carries them. Partial: a conversation without a customer message is
// never unread.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('conversations_unread')
    .on('conversations')
    .columns(['workspace_id', 'status', 'spam', 'snoozed_at', 'inbox_id', 'assignee_id', 'last_inbound_at', 'id'])
    .where('last_inbound_at', 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('conversations_unread').execute();
}
