import type { Kysely } from 'kysely';

// A mailbox migration's choice to keep reading the mailbox live as its channel once it completes
// (issue 38): the completion hands the migration's sealed password or sign-in over to the channel's
// reader. reading_handover records what the completion did: handed_over, or the reason it skipped.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('mailbox_migrations')
    .addColumn('keep_reading', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('mailbox_migrations').addColumn('reading_handover', 'text').execute();
}
