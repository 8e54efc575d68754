import { type Kysely, sql } from 'kysely';
import { isPostgres, notNull } from '../src/db/dialect.js';

// The webhook outbox becomes one row per event: the recording transaction writes the event's
// matching endpoints in one small row (appended to an integer-keyed table) instead of a delivery
// row per endpoint (ten rows of a WITHOUT ROWID table and its due index, rewritten pages in every
// commit). The dispatcher turns outbox rows into delivery rows, already claimed, in its own
// transactions (expandOutbox, src/webhooks/dispatcher.ts). Deliveries stored before stay as they are.
// The recording transaction now also decides from the cached endpoint settings whether an endpoint is
// disabled, so disabling or enabling one moves the reaction settings epoch (0026, 0027) like a
// filter change does.
const DISABLED_CHANGED = '(old.disabled_at is null) <> (new.disabled_at is null)';
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
  await sql
    .raw(
      isPostgres(db)
        ? `create trigger reaction_settings_epoch_webhook_endpoints_disabled after update of disabled_at on webhook_endpoints for each row when (${DISABLED_CHANGED}) execute function reaction_settings_epoch_bump()`
        : `create trigger reaction_settings_epoch_webhook_endpoints_disabled after update of disabled_at on webhook_endpoints when ${DISABLED_CHANGED} begin
            update reaction_settings_epoch set epoch = epoch + 1 where id = 1;
          end`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      isPostgres(db)
        ? 'drop trigger reaction_settings_epoch_webhook_endpoints_disabled on webhook_endpoints'
        : 'drop trigger reaction_settings_epoch_webhook_endpoints_disabled',
    )
    .execute(db);
  await db.schema.dropTable('webhook_outbox').execute();
}
