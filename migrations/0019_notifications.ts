import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // A realtime-only event addressed to one member (a notification); null for every other event.
  await db.schema.alterTable('events').addColumn('person_id', 'text').execute();

  // Per-person choices by trigger and channel (JSON); no row = the defaults.
  await db.schema
    .createTable('notification_preferences')
    .addColumn('person_id', 'text', (c) => c.primaryKey().references('people.id').onDelete('cascade'))
    .addColumn('settings', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();

  // One row per member notified of an event: what they were told (the same event never twice).
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('event_id', 'text', notNull)
    .addColumn('trigger', 'text', notNull) // new_conversation | assigned | customer_reply | mention
    .addColumn('conversation_id', 'text', notNull)
    .addColumn('title', 'text', notNull)
    .addColumn('body', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('notifications_event_person').on('notifications').columns(['event_id', 'person_id']).unique().execute();
  await db.schema.createIndex('notifications_person').on('notifications').columns(['person_id', 'created_at']).execute();
  await db.schema.createIndex('notifications_workspace').on('notifications').column('workspace_id').execute();
  await db.schema.createIndex('notifications_created').on('notifications').column('created_at').execute();

  // Notifications waiting for the member's next batched e-mail.
  await db.schema
    .createTable('notification_mail_lines')
    .addColumn('notification_id', 'text', (c) => c.primaryKey().references('notifications.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('notification_mail_lines_person').on('notification_mail_lines').columns(['person_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('notification_mail_lines').execute();
  await db.schema.dropTable('notifications').execute();
  await db.schema.dropTable('notification_preferences').execute();
  await db.schema.alterTable('events').dropColumn('person_id').execute();
}
