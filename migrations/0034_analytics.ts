import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Web analytics (issue 39): properties (websites), their raw events and visits, daily rollups, the
// daily visitor salts, and each workspace's monthly event limit and usage. No IP address is stored.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('analytics_properties')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('domain', 'text', notNull)
    .addColumn('name', 'text', notNull)
    .addColumn('subdomains', 'integer', notNull)
    .addColumn('chat_channel_id', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    // Set when deleted: the retention job then removes its data in batches, and the row last.
    .addColumn('deleted_at', 'text')
    // The last UTC day the rollup job summed up (null: none yet).
    .addColumn('rolled_through', 'text')
    .execute();
  // A domain belongs to one live property on the server (the tracker names only the domain).
  await db.schema.createIndex('analytics_properties_domain').on('analytics_properties').column('domain').unique().execute();
  await db.schema.createIndex('analytics_properties_workspace').on('analytics_properties').column('workspace_id').execute();

  await db.schema
    .createTable('analytics_limits')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('monthly_events', 'integer', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema
    .createTable('analytics_usage')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('month', 'text', notNull) // YYYY-MM (UTC)
    .addColumn('events', 'integer', notNull)
    .addColumn('warned_80_at', 'text')
    .addColumn('warned_100_at', 'text')
    .addPrimaryKeyConstraint('analytics_usage_pk', ['workspace_id', 'month'])
    .execute();

  await db.schema
    .createTable('analytics_salts')
    .addColumn('day', 'text', (c) => c.primaryKey()) // YYYY-MM-DD (UTC)
    .addColumn('salt', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();

  await db.schema
    .createTable('analytics_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('property_id', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('at', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('name', 'text', notNull)
    .addColumn('visitor_id', 'text')
    .addColumn('visit_id', 'text')
    .addColumn('path', 'text', notNull)
    .addColumn('referrer', 'text')
    .addColumn('source', 'text')
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('utm_content', 'text')
    .addColumn('utm_term', 'text')
    .addColumn('country', 'text')
    .addColumn('region', 'text')
    .addColumn('city', 'text')
    .addColumn('browser', 'text')
    .addColumn('os', 'text')
    .addColumn('device', 'text')
    .addColumn('props', 'text')
    .execute();
  await db.schema.createIndex('analytics_events_property_at').on('analytics_events').columns(['property_id', 'at']).execute();
  await db.schema.createIndex('analytics_events_workspace').on('analytics_events').column('workspace_id').execute();
  await db.schema.createIndex('analytics_events_at').on('analytics_events').column('at').execute();

  await db.schema
    .createTable('analytics_visits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('property_id', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('visitor_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('started_at', 'text', notNull)
    .addColumn('last_at', 'text', notNull)
    .addColumn('entry_path', 'text', notNull)
    .addColumn('exit_path', 'text', notNull)
    .addColumn('pageviews', 'integer', notNull)
    .addColumn('events', 'integer', notNull)
    .addColumn('duration_s', 'integer', notNull)
    .addColumn('referrer', 'text')
    .addColumn('source', 'text')
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('country', 'text')
    .addColumn('region', 'text')
    .addColumn('city', 'text')
    .addColumn('browser', 'text')
    .addColumn('os', 'text')
    .addColumn('device', 'text')
    .execute();
  await db.schema.createIndex('analytics_visits_visitor').on('analytics_visits').columns(['visitor_id', 'last_at']).execute();
  await db.schema.createIndex('analytics_visits_started').on('analytics_visits').columns(['property_id', 'started_at']).execute();
  await db.schema.createIndex('analytics_visits_workspace').on('analytics_visits').column('workspace_id').execute();

  // Daily totals per dimension value, kept by the rollup job; dimension '' is the day's totals.
  await db.schema
    .createTable('analytics_rollups')
    .addColumn('property_id', 'text', notNull)
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('dimension', 'text', notNull)
    .addColumn('value', 'text', notNull)
    .addColumn('visitors', 'integer', notNull)
    .addColumn('pageviews', 'integer', notNull)
    .addColumn('events', 'integer', notNull)
    .addColumn('visits', 'integer', notNull)
    .addColumn('bounces', 'integer', notNull)
    .addColumn('duration_s', 'integer', notNull)
    .addPrimaryKeyConstraint('analytics_rollups_pk', ['property_id', 'day', 'dimension', 'value'])
    .execute();
  await db.schema.createIndex('analytics_rollups_workspace').on('analytics_rollups').column('workspace_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'analytics_rollups',
    'analytics_visits',
    'analytics_events',
    'analytics_salts',
    'analytics_usage',
    'analytics_limits',
    'analytics_properties',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
