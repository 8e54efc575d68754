import { type Kysely, sql } from 'kysely';

// Today's bounce rate, visit duration and views per visit without summing the raw visits (issue 39):
// the writer keeps per day (analytics_day_totals: visits, bounces, duration_s) and per value of a
// visit dimension (analytics_day_values: bounces, duration_s, and in pageviews/events the sums of
// the visits' pageviews and events; event dimensions keep their events there as before) the sums
// the dashboard read from analytics_visits, moving them by the difference when a visit goes on.
// Browsers and operating systems become kept visit dimensions too. Filled here from the raw visits
// for the days after each property's rolled_through, as 0073 did.
const VISIT_DIMENSIONS = {
  'visit:entry_page': 'entry_path',
  'visit:exit_page': 'exit_path',
  'visit:source': 'source',
  'visit:country': 'country',
  'visit:device': 'device',
  'visit:browser': 'browser',
  'visit:os': 'os',
};

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['visits', 'bounces', 'duration_s'])
    await db.schema
      .alterTable('analytics_day_totals')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  for (const column of ['bounces', 'duration_s'])
    await db.schema
      .alterTable('analytics_day_values')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

  const notRolled = sql`v.day > coalesce((select p.rolled_through from analytics_properties p where p.id = v.property_id), '')`;
  const bounce = sql`sum(case when v.events <= 1 then 1 else 0 end)`;
  await sql`insert into analytics_day_totals (property_id, day, workspace_id, visitors, pageviews, events, visits, bounces, duration_s)
    select v.property_id, v.day, min(v.workspace_id), 0, 0, 0, count(*), ${bounce}, sum(v.duration_s) from analytics_visits v
    where ${notRolled} group by v.property_id, v.day
    on conflict (property_id, day) do update set visits = excluded.visits, bounces = excluded.bounces, duration_s = excluded.duration_s`.execute(db);
  // The visit dimensions' rows made again whole (0073 made those it kept without the visits' sums).
  const notRolledKept = (t: string) =>
    sql`${sql.ref(`${t}.day`)} > coalesce((select p.rolled_through from analytics_properties p where p.id = ${sql.ref(`${t}.property_id`)}), '')`;
  for (const [dimension, column] of Object.entries(VISIT_DIMENSIONS)) {
    await sql`delete from analytics_day_value_visitors where dimension = ${dimension} and ${notRolledKept('analytics_day_value_visitors')}`.execute(db);
    await sql`delete from analytics_day_values where dimension = ${dimension} and ${notRolledKept('analytics_day_values')}`.execute(db);
    const value = sql`coalesce(${sql.ref(`v.${column}`)}, '')`;
    await sql`insert into analytics_day_value_visitors (property_id, day, dimension, value, visitor_id, n)
      select v.property_id, v.day, ${sql.lit(dimension)}, ${value}, v.visitor_id, count(*) from analytics_visits v
      where ${notRolled} group by v.property_id, v.day, ${value}, v.visitor_id`.execute(db);
    await sql`insert into analytics_day_values (property_id, day, dimension, value, workspace_id, visitors, visits, pageviews, events, bounces, duration_s)
      select v.property_id, v.day, ${sql.lit(dimension)}, ${value}, min(v.workspace_id), count(distinct v.visitor_id), count(*),
        sum(v.pageviews), sum(v.events), ${bounce}, sum(v.duration_s)
      from analytics_visits v where ${notRolled} group by v.property_id, v.day, ${value}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const dimension of ['visit:browser', 'visit:os']) {
    await db.deleteFrom('analytics_day_value_visitors').where('dimension', '=', dimension).execute();
    await db.deleteFrom('analytics_day_values').where('dimension', '=', dimension).execute();
  }
  await sql`update analytics_day_values set pageviews = 0, events = 0 where dimension like 'visit:%'`.execute(db);
  for (const column of ['bounces', 'duration_s']) await db.schema.alterTable('analytics_day_values').dropColumn(column).execute();
  for (const column of ['visits', 'bounces', 'duration_s']) await db.schema.alterTable('analytics_day_totals').dropColumn(column).execute();
}
