import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Who uploaded each file through the chat widget, for the upload quotas (issue 32): unsent bytes
// per visitor session and per client address (hashed), and bytes per workspace per day. A row goes
// with its attachment (an unsent upload is removed after a day); sent ones leave after a day.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('widget_uploads')
    .addColumn('attachment_id', 'text', (c) => c.primaryKey().references('attachments.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('session_id', 'text', notNull)
    .addColumn('address_hash', 'text', notNull)
    .addColumn('size', 'bigint', notNull)
    .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('widget_uploads_session').on('widget_uploads').columns(['session_id', 'sent']).execute();
  await db.schema.createIndex('widget_uploads_address').on('widget_uploads').columns(['address_hash', 'sent']).execute();
  await db.schema.createIndex('widget_uploads_workspace').on('widget_uploads').columns(['workspace_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('widget_uploads').execute();
}
