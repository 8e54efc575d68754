import type { Kysely } from 'kysely';

// Undo send and send later (issue 34): a reply, forward or new conversation's first mail held until
// `send_at` (delivery status `scheduled`); the `message.send_later` job hands it to sending then.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('send_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('send_at').execute();
}
