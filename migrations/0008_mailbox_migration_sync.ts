import type { Kysely } from 'kysely';

// Mailbox migrations, part 2 (switching delivery, finishing, removing history): the test message,
// the quiet period, how the migration ended, and which items of the source were new mail (received
// after the copy ended) rather than history.
export async function up(db: Kysely<any>): Promise<void> {
  for (const [column, type] of [
    ['sync_polled_at', 'text'],
    ['probe_token', 'text'],
    ['probe_sent_at', 'text'],
    ['probe_arrived_at', 'text'],
    ['probe_route', 'text'],
    ['last_old_only_at', 'text'],
    ['end_reason', 'text'],
    ['removal', 'text'],
  ] as const) {
    await db.schema.alterTable('mailbox_migrations').addColumn(column, type).execute();
  }
  await db.schema.createIndex('mailbox_migrations_probe').on('mailbox_migrations').column('probe_token').execute();
  await db.schema
    .alterTable('mailbox_migration_items')
    .addColumn('new_mail', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mailbox_migration_items').dropColumn('new_mail').execute();
  await db.schema.dropIndex('mailbox_migrations_probe').execute();
  for (const column of ['removal', 'end_reason', 'last_old_only_at', 'probe_route', 'probe_arrived_at', 'probe_sent_at', 'probe_token', 'sync_polled_at']) {
    await db.schema.alterTable('mailbox_migrations').dropColumn(column).execute();
  }
}
