import type { Kysely } from 'kysely';

// The notification inbox (GET /v1/notifications): when each notification was read, and whether it
// is shown under the bell (the member wanted it "in the panel" when it was made). Notifications made
// before were all told in the panel's memory only: they stay unread and shown.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('read_at', 'text').execute();
  await db.schema
    .alterTable('notifications')
    .addColumn('in_panel', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex('notifications_person_workspace').on('notifications').columns(['person_id', 'workspace_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('notifications_person_workspace').execute();
  await db.schema.alterTable('notifications').dropColumn('in_panel').execute();
  await db.schema.alterTable('notifications').dropColumn('read_at').execute();
}
