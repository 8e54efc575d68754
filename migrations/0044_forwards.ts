import type { Kysely } from 'kysely';

// Forwards (issue 33): the message a forward quotes. A forward is outbound mail that answers nothing
// (no In-Reply-To, its own Fwd: subject) and is never the mail a later reply to the customer answers.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('forwarded_message_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('forwarded_message_id').execute();
}
