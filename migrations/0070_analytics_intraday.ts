import { type Kysely, sql } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Today's dashboard without counting distinct visitors over every raw event (issue 39). The writer
// keeps, in each batch's transaction, the visitors seen per property and day (a unique key: the
// first event of a visitor that day inserts the row) and the day's totals (visitors, pageviews,
// events), so the unfiltered figures of the days not yet rolled up are one row per day. Rows are
// made for the days after the property's rolled_through (filled from the raw events here) and
// deleted when the rollup job sums up their day.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_day_visitors')
    .addColumn('property_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('visitor_id', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addPrimaryKeyConstraint('analytics_day_visitors_pk', ['property_id', 'day', 'visitor_id'])
    .execute();
  await db.schema.createIndex('analytics_day_visitors_workspace').on('analytics_day_visitors').column('workspace_id').execute();
  await db.schema
    .createTable('analytics_day_totals')
    .addColumn('property_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('visitors', 'integer', notNull)
    .addColumn('pageviews', 'integer', notNull)
    .addColumn('events', 'integer', notNull)
    .addPrimaryKeyConstraint('analytics_day_totals_pk', ['property_id', 'day'])
    .execute();
  await db.schema.createIndex('analytics_day_totals_workspace').on('analytics_day_totals').column('workspace_id').execute();

  const notRolled = sql`e.day > coalesce((select p.rolled_through from analytics_properties p where p.id = e.property_id), '')`;
  await sql`insert into analytics_day_visitors (property_id, day, visitor_id, workspace_id)
    select e.property_id, e.day, e.visitor_id, min(e.workspace_id) from analytics_events e
    where e.visitor_id is not null and ${notRolled} group by e.property_id, e.day, e.visitor_id`.execute(db);
  await sql`insert into analytics_day_totals (property_id, day, workspace_id, visitors, pageviews, events)
    select e.property_id, e.day, min(e.workspace_id), count(distinct e.visitor_id),
      sum(case when e.name = 'pageview' then 1 else 0 end), count(*) from analytics_events e
    where ${notRolled} group by e.property_id, e.day`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('analytics_day_totals').execute();
  await db.schema.dropTable('analytics_day_visitors').execute();
}
