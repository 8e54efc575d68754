import { type Kysely, sql } from 'kysely';
import { isPostgres, notNull } from '../src/db/dialect.js';

// Today's breakdowns without counting distinct visitors over the raw rows (issue 39). For the
// dimensions the dashboard shows first (pages, event names, entry and exit pages, sources,
// countries, devices) the writer keeps, in each batch's transaction, how many events (event
// dimensions) or visits (visit dimensions) each visitor has with each value that day, and per value
// the visitors (the values whose count went from 0 to more or back), visits, pageviews and events.
// The unique key decides between processes as analytics_day_visitors does. Rows are made for the
// days after the property's rolled_through (filled from the raw rows here) and deleted when the
// rollup job sums up their day. Values null in the raw rows are '' here, as in the rollups.
const EVENT_DIMENSIONS = { 'event:page': 'path', 'event:name': 'name' };
const VISIT_DIMENSIONS = {
  'visit:entry_page': 'entry_path',
  'visit:exit_page': 'exit_path',
  'visit:source': 'source',
  'visit:country': 'country',
  'visit:device': 'device',
};

export async function up(db: Kysely<any>): Promise<void> {
  // On SQLite the rows live in their key's b-tree (no rowid table beside it): one b-tree write per upsert, not two.
  const clustered = isPostgres(db) ? sql`` : sql`without rowid`;
  await db.schema
    .createTable('analytics_day_value_visitors')
    .addColumn('property_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('dimension', 'text', notNull)
    .addColumn('value', 'text', notNull)
    .addColumn('visitor_id', 'text', notNull)
    .addColumn('n', 'integer', notNull)
    .addPrimaryKeyConstraint('analytics_day_value_visitors_pk', ['property_id', 'day', 'dimension', 'value', 'visitor_id'])
    .modifyEnd(clustered)
    .execute();
  await db.schema
    .createTable('analytics_day_values')
    .addColumn('property_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('dimension', 'text', notNull)
    .addColumn('value', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('visitors', 'integer', notNull)
    .addColumn('visits', 'integer', notNull)
    .addColumn('pageviews', 'integer', notNull)
    .addColumn('events', 'integer', notNull)
    .addPrimaryKeyConstraint('analytics_day_values_pk', ['property_id', 'day', 'dimension', 'value'])
    .modifyEnd(clustered)
    .execute();
  await db.schema.createIndex('analytics_day_values_workspace').on('analytics_day_values').column('workspace_id').execute();

  const notRolled = (t: string) =>
    sql`${sql.ref(`${t}.day`)} > coalesce((select p.rolled_through from analytics_properties p where p.id = ${sql.ref(`${t}.property_id`)}), '')`;
  for (const [dimension, column] of Object.entries(EVENT_DIMENSIONS)) {
    const value = sql`coalesce(${sql.ref(`e.${column}`)}, '')`;
    await sql`insert into analytics_day_value_visitors (property_id, day, dimension, value, visitor_id, n)
      select e.property_id, e.day, ${sql.lit(dimension)}, ${value}, e.visitor_id, count(*) from analytics_events e
      where e.visitor_id is not null and ${notRolled('e')} group by e.property_id, e.day, ${value}, e.visitor_id`.execute(db);
    await sql`insert into analytics_day_values (property_id, day, dimension, value, workspace_id, visitors, visits, pageviews, events)
      select e.property_id, e.day, ${sql.lit(dimension)}, ${value}, min(e.workspace_id), count(distinct e.visitor_id), 0,
        sum(case when e.name = 'pageview' then 1 else 0 end), count(*) from analytics_events e
      where ${notRolled('e')} group by e.property_id, e.day, ${value}`.execute(db);
  }
  for (const [dimension, column] of Object.entries(VISIT_DIMENSIONS)) {
    const value = sql`coalesce(${sql.ref(`v.${column}`)}, '')`;
    await sql`insert into analytics_day_value_visitors (property_id, day, dimension, value, visitor_id, n)
      select v.property_id, v.day, ${sql.lit(dimension)}, ${value}, v.visitor_id, count(*) from analytics_visits v
      where ${notRolled('v')} group by v.property_id, v.day, ${value}, v.visitor_id`.execute(db);
    await sql`insert into analytics_day_values (property_id, day, dimension, value, workspace_id, visitors, visits, pageviews, events)
      select v.property_id, v.day, ${sql.lit(dimension)}, ${value}, min(v.workspace_id), count(distinct v.visitor_id), count(*), 0, 0
      from analytics_visits v where ${notRolled('v')} group by v.property_id, v.day, ${value}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_day_values').execute();
  await db.schema.dropTable('analytics_day_value_visitors').execute();
}
