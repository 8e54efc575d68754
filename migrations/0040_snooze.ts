import type { Kysely } from 'kysely';

// Snooze (issue 35): a snoozed conversation has snoozed_at (when it was put aside) and
// snoozed_until (when it wakes; null while snoozed means "until the customer answers"). The
// index serves the Snoozed view and the open list, which leaves snoozed ones out.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('snoozed_at', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('snoozed_until', 'text').execute();
  await db.schema.createIndex('conversations_snoozed').on('conversations').columns(['workspace_id', 'snoozed_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('conversations_snoozed').execute();
  await db.schema.alterTable('conversations').dropColumn('snoozed_until').execute();
  await db.schema.alterTable('conversations').dropColumn('snoozed_at').execute();
}
