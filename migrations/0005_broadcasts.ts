import { type Kysely, sql } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Broadcast governance per workspace (the operator's approval, suspension, limit) and warm-up.
  // A workspace without a row has the default state of its origin.
  await db.schema
    .createTable('broadcast_governance')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('status', 'text') // null (default of the origin) | requested | approved | denied | suspended
    .addColumn('reason', 'text')
    .addColumn('suspended_by', 'text') // operator | automatic
    .addColumn('suspended_at', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('daily_limit', 'integer')
    .addColumn('warmup_allowance', 'integer', notNull)
    .addColumn('warmup_through_day', 'text')
    .addColumn('request_email', 'text')
    .addColumn('request_website', 'text')
    .addColumn('request_senders', 'text')
    .addColumn('request_consent', 'text')
    .addColumn('requested_at', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();

  await db.schema
    .createTable('broadcasts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.references('channels.id').onDelete('set null'))
    .addColumn('subject', 'text', notNull)
    .addColumn('text', 'text', notNull)
    .addColumn('html', 'text')
    .addColumn('status', 'text', notNull) // draft | scheduled | sending | paused | sent | cancelled
    .addColumn('pause_reason', 'text')
    .addColumn('pause_detail', 'text')
    .addColumn('paused_at', 'text')
    .addColumn('send_at', 'text')
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('recipients_deleted_at', 'text') // retention removed the recipients (counts stay)
    .addColumn('continues_at', 'text')
    .addColumn('sender_domain', 'text')
    .addColumn('sender_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('recipients_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('suppressed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bounced_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('complained_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unsubscribed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', 'text') // person or key id
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('broadcasts_workspace').on('broadcasts').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('broadcasts_inbox').on('broadcasts').columns(['inbox_id', 'status']).execute();
  await db.schema.createIndex('broadcasts_finished').on('broadcasts').column('finished_at').where(sql<boolean>`finished_at is not null`).execute();

  // One row per recipient; seq numbers them within the broadcast (the send order).
  await db.schema
    .createTable('broadcast_recipients')
    .addColumn('broadcast_id', 'text', (c) => c.notNull().references('broadcasts.id').onDelete('cascade'))
    .addColumn('seq', 'integer', notNull)
    .addColumn('email', 'text', notNull)
    .addColumn('contact_id', 'text')
    .addColumn('status', 'text', notNull) // pending | sending | sent | failed | suppressed
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_at', 'text')
    .addColumn('error', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('provider_message_id', 'text')
    .addColumn('bounced_at', 'text')
    .addColumn('complained_at', 'text')
    .addColumn('unsubscribed_at', 'text')
    .addPrimaryKeyConstraint('broadcast_recipients_pk', ['broadcast_id', 'seq'])
    .addUniqueConstraint('broadcast_recipients_email', ['broadcast_id', 'email'])
    .execute();
  await db.schema.createIndex('broadcast_recipients_status').on('broadcast_recipients').columns(['broadcast_id', 'status', 'seq']).execute();
  await db.schema
    .createIndex('broadcast_recipients_provider_id')
    .on('broadcast_recipients')
    .column('provider_message_id')
    .where(sql<boolean>`provider_message_id is not null`)
    .execute();

  // Addresses a workspace never mails again: unsubscribed, hard-bounced or complained.
  await db.schema
    .createTable('broadcast_suppressions')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('email', 'text', notNull)
    .addColumn('reason', 'text', notNull) // unsubscribed | bounced | complained
    .addColumn('broadcast_id', 'text')
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('broadcast_suppressions_pk', ['workspace_id', 'email'])
    .execute();

  // Sending totals per workspace and UTC day: the daily limit, warm-up and 30-day rates read them.
  await db.schema
    .createTable('broadcast_daily_totals')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('day', 'text', notNull) // YYYY-MM-DD (UTC)
    .addColumn('reserved', 'integer', (c) => c.notNull().defaultTo(0)) // recipients taken from the day's allowance
    .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bounced', 'integer', (c) => c.notNull().defaultTo(0)) // of mails sent that day
    .addColumn('complained', 'integer', (c) => c.notNull().defaultTo(0)) // of mails sent that day
    .addColumn('rate_pauses', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('broadcast_daily_totals_pk', ['workspace_id', 'day'])
    .execute();
  await db.schema.createIndex('broadcast_daily_totals_day').on('broadcast_daily_totals').column('day').execute();

  // Lines waiting for the next operator digest e-mail.
  await db.schema
    .createTable('operator_digest_lines')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', notNull)
    .addColumn('workspace_id', 'text')
    .addColumn('text', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('sent_at', 'text')
    .execute();
  await db.schema.createIndex('operator_digest_lines_unsent').on('operator_digest_lines').column('created_at').where(sql<boolean>`sent_at is null`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['operator_digest_lines', 'broadcast_daily_totals', 'broadcast_suppressions', 'broadcast_recipients', 'broadcasts', 'broadcast_governance']) {
    await db.schema.dropTable(t).execute();
  }
}
