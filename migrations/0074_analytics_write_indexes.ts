import type { Kysely } from 'kysely';

// Indexes every analytics event or visit paid for at ingest while no read needs them (issue 39,
// bench/analytics on Postgres): retention and deletion go property by property over the
// (property_id, at) and (property_id, day) indexes now, and no query orders visits by start.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('analytics_events_at').execute();
  await db.schema.dropIndex('analytics_events_workspace').execute();
  await db.schema.dropIndex('analytics_visits_started').execute();
  await db.schema.dropIndex('analytics_visits_workspace').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('analytics_events_at').on('analytics_events').column('at').execute();
  await db.schema.createIndex('analytics_events_workspace').on('analytics_events').column('workspace_id').execute();
  await db.schema.createIndex('analytics_visits_started').on('analytics_visits').columns(['property_id', 'started_at']).execute();
  await db.schema.createIndex('analytics_visits_workspace').on('analytics_visits').column('workspace_id').execute();
}
