import type { Kysely } from 'kysely';
import { isPostgres, notNull } from '../src/db/dialect.js';

// The webhook outbox becomes one row per event: the recording transaction writes the event's
// matching endpoints in one small row (appended to an integer-keyed table) instead of a delivery
// row per endpoint (ten rows of a WITHOUT ROWID table and its due index, rewritten pages in every
// commit). The dispatcher turns outbox rows into delivery rows, already claimed, in its own
// transactions (expandOutbox, src/webhooks/dispatcher.ts). Deliveries stored before stay as they are.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_outbox')
    // SQLite: "integer primary key" is the rowid, so events append to the table's last page.
    .addColumn('event_seq', isPostgres(db) ? 'bigint' : 'integer', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('event_id', 'text', notNull)
    // The endpoints the event matched when it was recorded, comma-separated, and how many.
    .addColumn('endpoint_ids', 'text', notNull)
    .addColumn('endpoint_count', 'integer', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('webhook_outbox_workspace').on('webhook_outbox').column('workspace_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_outbox').execute();
}
