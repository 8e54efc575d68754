import type { Kysely } from 'kysely';

// When a reply whose sending keeps failing is tried next (issue 43): the panel says "Not sent yet —
// will retry at 14:05 (connection refused)" instead of "Sending…" for minutes.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('delivery_retry_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('delivery_retry_at').execute();
}
