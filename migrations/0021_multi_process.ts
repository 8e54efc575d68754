// Several `svc serve` processes on one database (issue 19).
// - rate_limits: fixed-window counters that every process shares (src/platform/rate-limit.ts).
// - Postgres: every transaction that writes events notifies channel `svc_events` at commit, with
//   the writer's application_name as payload, so that the other processes' realtime pumps wake at
//   once (src/events/watch.ts listens; a slow poll stays as the fallback).
import { type Kysely, sql } from 'kysely';
import { isPostgres, notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('window_ends_at', 'text', notNull)
    .addColumn('count', 'integer', notNull)
    .execute();
  await db.schema.createIndex('rate_limits_window_ends').on('rate_limits').column('window_ends_at').execute();

  if (isPostgres(db)) {
    await sql`create function svc_events_notify() returns trigger language plpgsql as $$
       begin
         perform pg_notify('svc_events', current_setting('application_name'));
         return null;
       end $$`.execute(db);
    // Once per inserting statement; Postgres sends one notification per transaction and payload.
    await sql`create trigger events_notify after insert on events for each statement execute function svc_events_notify()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger events_notify on events`.execute(db);
    await sql`drop function svc_events_notify()`.execute(db);
  }
  await db.schema.dropTable('rate_limits').execute();
}
