import { type Kysely, sql } from 'kysely';
import { isPostgres, notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('related_inbox_ids', 'text').execute();
  if (isPostgres(db)) await addStreamPosition(db);

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('url', 'text', notNull)
    .addColumn('events', 'text', notNull) // JSON array
    .addColumn('inbox_id', 'text', (c) => c.references('inboxes.id').onDelete('cascade'))
    .addColumn('include_notes', 'integer', notNull)
    .addColumn('secret_sealed', 'text', notNull)
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('failing_since', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('webhook_endpoints_workspace').on('webhook_endpoints').column('workspace_id').execute();

  // The outbox: one row per (event, endpoint), written in the transaction that records the event.
  // Keyed by (event_seq, endpoint_id) and, on SQLite, stored in that order (WITHOUT ROWID): a
  // recording transaction appends one event's deliveries side by side. No index leads with
  // endpoint_id, which would touch a page per endpoint in every recording transaction; logs go
  // through the attempts (written in batches) and the clean-up through finished_at.
  const deliveries = db.schema
    .createTable('webhook_deliveries')
    .addColumn('event_seq', 'bigint', notNull)
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('event_id', 'text', notNull)
    .addColumn('status', 'text', notNull) // pending | succeeded | failed
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('manual_requested_at', 'text') // a redelivery was asked for and is not done yet
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['event_seq', 'endpoint_id']);
  await (isPostgres(db) ? deliveries : deliveries.modifyEnd(sql`without rowid`)).execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').column('next_attempt_at').where(sql<boolean>`status = 'pending'`).execute();
  await db.schema
    .createIndex('webhook_deliveries_manual')
    .on('webhook_deliveries')
    .column('manual_requested_at')
    .where(sql<boolean>`manual_requested_at is not null`)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_finished')
    .on('webhook_deliveries')
    .column('finished_at')
    .where(sql<boolean>`finished_at is not null`)
    .execute();

  // The attempt log, stored in the order the logs read it (per endpoint, by time; WITHOUT ROWID on
  // SQLite). The endpoint is reached through the delivery, whose deletion takes its attempts along.
  const attempts = db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', notNull)
    .addColumn('event_seq', 'bigint', notNull)
    .addColumn('endpoint_id', 'text', notNull)
    .addColumn('event_id', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('attempt', 'integer')
    .addColumn('manual', 'integer', notNull)
    .addColumn('started_at', 'text', notNull)
    .addColumn('duration_ms', 'integer', notNull)
    .addColumn('outcome', 'text', notNull) // succeeded | failed
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['endpoint_id', 'started_at', 'id'])
    .addForeignKeyConstraint('webhook_attempts_delivery', ['event_seq', 'endpoint_id'], 'webhook_deliveries', ['event_seq', 'endpoint_id'], (c) =>
      c.onDelete('cascade'),
    );
  await (isPostgres(db) ? attempts : attempts.modifyEnd(sql`without rowid`)).execute();
  await db.schema.createIndex('webhook_attempts_by_delivery').on('webhook_attempts').columns(['event_seq', 'endpoint_id']).execute();

  // Live connections (members, keys, contacts) with heartbeats; stale rows are kept one hour.
  await db.schema
    .createTable('realtime_connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('kind', 'text', notNull) // member | api_key | contact
    .addColumn('subject_id', 'text', notNull)
    .addColumn('inbox_id', 'text')
    .addColumn('connected_at', 'text', notNull)
    .addColumn('last_seen_at', 'text', notNull)
    .addColumn('closed_at', 'text')
    .execute();
  await db.schema.createIndex('realtime_connections_subject').on('realtime_connections').columns(['kind', 'subject_id', 'last_seen_at']).execute();
  await db.schema.createIndex('realtime_connections_seen').on('realtime_connections').column('last_seen_at').execute();
}

// The advisory lock key that orders event commits on Postgres (any fixed number).
const EVENT_STREAM_LOCK = 6_090_471;

/**
 * Postgres: transactions commit in any order, so the row number (seq, taken at insert) does not say
 * what a reader may already have seen. Every event gets a `position` when its transaction commits:
 * a deferred trigger takes a transaction lock (held only while committing, so it cannot deadlock
 * with the transaction's other locks) and numbers the event's row. Readers resume by position.
 */
async function addStreamPosition(db: Kysely<any>): Promise<void> {
  await sql`alter table events add column position bigint`.execute(db);
  await sql`create sequence events_position_seq`.execute(db);
  await sql`update events set position = seq`.execute(db);
  await sql`select setval('events_position_seq', greatest((select max(seq) from events), 1), (select max(seq) from events) is not null)`.execute(db);
  await sql`create unique index events_position on events (position)`.execute(db);
  await sql`create index events_workspace_position on events (workspace_id, position)`.execute(db);
  await sql
    .raw(
      `create function svc_events_assign_position() returns trigger language plpgsql as $$
       begin
         perform pg_advisory_xact_lock(${EVENT_STREAM_LOCK});
         update events set position = nextval('events_position_seq') where seq = new.seq;
         return null;
       end $$`,
    )
    .execute(db);
  await sql`create constraint trigger events_assign_position after insert on events deferrable initially deferred for each row execute function svc_events_assign_position()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['realtime_connections', 'webhook_attempts', 'webhook_deliveries', 'webhook_endpoints']) {
    await db.schema.dropTable(t).execute();
  }
  await db.schema.alterTable('events').dropColumn('related_inbox_ids').execute();
  if (isPostgres(db)) {
    await sql`drop trigger events_assign_position on events`.execute(db);
    await sql`drop function svc_events_assign_position()`.execute(db);
    await sql`alter table events drop column position`.execute(db);
    await sql`drop sequence events_position_seq`.execute(db);
  }
}
