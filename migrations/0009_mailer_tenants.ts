import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // One Amazon SES tenant per inbox (stored with the inbox). Not a foreign key: when an inbox or
  // workspace goes, the row stays until its tenant is deleted at the provider.
  await db.schema
    .createTable('mailer_tenants')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('tenant_name', 'text', notNull)
    .addColumn('tenant_id', 'text')
    .addColumn('tenant_arn', 'text')
    .addColumn('state', 'text', notNull) // pending | ready
    .addColumn('sending_status', 'text') // ENABLED | REINSTATED | DISABLED
    .addColumn('paused_by', 'text') // reputation_policy | provider
    .addColumn('cause', 'text')
    .addColumn('resources', 'text', notNull) // JSON: [{type, arn}]
    .addColumn('status_checked_at', 'text')
    .addColumn('status_changed_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('mailer_tenants_workspace').on('mailer_tenants').column('workspace_id').execute();

  // Whether an e-mail channel is managed (SES SMTP endpoint of SVC_MAILER_REGION, user name an
  // access key of the server's account), as last checked.
  await db.schema
    .createTable('mailer_channels')
    .addColumn('channel_id', 'text', (c) => c.primaryKey().references('channels.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('managed', 'integer', notNull)
    .addColumn('reason', 'text', notNull)
    .addColumn('identity', 'text')
    .addColumn('checked_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('mailer_channels_inbox').on('mailer_channels').column('inbox_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mailer_channels').execute();
  await db.schema.dropTable('mailer_tenants').execute();
}
