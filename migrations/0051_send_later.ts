import type { Kysely } from 'kysely';

// Undo send and send later (issue 34): a reply, forward or new conversation's first mail held until
// `send_at` (delivery status `scheduled`); the `message.send_later` job hands it to sending then.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('send_at', 'text').execute();
  // Undo send: how long the panel holds a person's replies (0 = off).
  await db.schema
    .alterTable('people')
    .addColumn('undo_send_seconds', 'integer', (c) => c.notNull().defaultTo(10))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('send_at').execute();
  await db.schema.alterTable('people').dropColumn('undo_send_seconds').execute();
}
