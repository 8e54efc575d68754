import type { Kysely } from 'kysely';

// The dashboard's reads at scale (issue 39, bench/analytics). The stats read raw events and visits
// by property and day (the days not yet rolled up: today), but the only indexes were by time, so
// every event of the property was looked at and fetched from the table. Events get one index the
// totals, the time series and the top pages read without touching the table (day, then page, with
// the name and visitor the sums need); visits one by day. Rollups are read by dimension over a
// range of days, while the primary key leads with the day: an index by dimension carrying the sums.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('analytics_events_day').on('analytics_events').columns(['property_id', 'day', 'path', 'name', 'visitor_id']).execute();
  await db.schema.createIndex('analytics_visits_day').on('analytics_visits').columns(['property_id', 'day']).execute();
  await db.schema
    .createIndex('analytics_rollups_dimension')
    .on('analytics_rollups')
    .columns(['property_id', 'dimension', 'day', 'value', 'visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('analytics_rollups_dimension').execute();
  await db.schema.dropIndex('analytics_visits_day').execute();
  await db.schema.dropIndex('analytics_events_day').execute();
}
