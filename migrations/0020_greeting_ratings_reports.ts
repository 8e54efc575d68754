import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Inbox greeting (auto-reply to the first mail of a new conversation): settings per inbox, and one
  // row per greeting sent (the "once per contact per 24 hours" rule reads it).
  await db.schema
    .createTable('inbox_greetings')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('enabled', 'integer', notNull)
    .addColumn('text_en', 'text', notNull)
    .addColumn('text_tr', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('inbox_greetings_workspace').on('inbox_greetings').column('workspace_id').execute();
  await db.schema
    .createTable('greetings_sent')
    .addColumn('message_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('contact_id', 'text', notNull)
    .addColumn('conversation_id', 'text', notNull)
    .addColumn('sent_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('greetings_sent_conversation').on('greetings_sent').column('conversation_id').unique().execute();
  await db.schema.createIndex('greetings_sent_contact').on('greetings_sent').columns(['contact_id', 'sent_at']).execute();
  await db.schema.createIndex('greetings_sent_workspace').on('greetings_sent').columns(['workspace_id', 'inbox_id']).execute();

  // Satisfaction ratings: settings per inbox, one request per conversation close that asked, and the
  // rating on the conversation itself.
  await db.schema
    .createTable('inbox_rating_settings')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('enabled', 'integer', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('inbox_rating_settings_workspace').on('inbox_rating_settings').column('workspace_id').execute();
  await db.schema
    .createTable('rating_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('conversation_id', 'text', notNull)
    .addColumn('contact_id', 'text', notNull)
    .addColumn('via', 'text', notNull) // email | chat
    .addColumn('status', 'text', notNull) // pending | sent | failed | answered
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('answered_at', 'text')
    .execute();
  await db.schema.createIndex('rating_requests_conversation').on('rating_requests').column('conversation_id').unique().execute();
  await db.schema.createIndex('rating_requests_workspace').on('rating_requests').columns(['workspace_id', 'inbox_id']).execute();
  await db.schema.alterTable('conversations').addColumn('rating_score', 'integer').execute();
  await db.schema.alterTable('conversations').addColumn('rating_comment', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('rated_at', 'text').execute();

  // Reports: per-day totals and the durations behind medians, kept by event subscribers in the
  // transaction of each change (imported history records no events, so it never counts).
  // member_id '' = no member (conversations opened, ratings of unassigned conversations).
  await db.schema
    .createTable('report_days')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('member_id', 'text', notNull)
    .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('closed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('replies', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ratings', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_sum', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_1', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_2', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_3', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_4', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_5', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('report_days_pk', ['workspace_id', 'day', 'inbox_id', 'member_id'])
    .execute();
  await db.schema
    .createTable('report_durations')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('member_id', 'text', notNull)
    .addColumn('kind', 'text', notNull) // first_response | resolution
    .addColumn('conversation_id', 'text', notNull)
    .addColumn('seconds', 'integer', notNull)
    .execute();
  // Covering: a report reads only these columns, straight from the index.
  await db.schema
    .createIndex('report_durations_day')
    .on('report_durations')
    .columns(['workspace_id', 'day', 'kind', 'seconds', 'inbox_id', 'member_id'])
    .execute();
  // Usage per month reads messages by workspace and time.
  await db.schema.createIndex('messages_workspace_created').on('messages').columns(['workspace_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('messages_workspace_created').execute();
  await db.schema.dropTable('report_durations').execute();
  await db.schema.dropTable('report_days').execute();
  await db.schema.alterTable('conversations').dropColumn('rated_at').execute();
  await db.schema.alterTable('conversations').dropColumn('rating_comment').execute();
  await db.schema.alterTable('conversations').dropColumn('rating_score').execute();
  await db.schema.dropTable('rating_requests').execute();
  await db.schema.dropTable('inbox_rating_settings').execute();
  await db.schema.dropTable('greetings_sent').execute();
  await db.schema.dropTable('inbox_greetings').execute();
}
