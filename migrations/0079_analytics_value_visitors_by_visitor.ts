import { type Kysely, sql } from 'kysely';
import { isPostgres, notNull } from '../src/db/dialect.js';

// analytics_day_value_visitors keyed by visitor before value (issue 39, bench/analytics): a batch's
// new rows (each event's page for each of its few dozen visitors) were spread over as many places
// in the b-tree as the batch had pages, so each batch dirtied hundreds of pages and its commit and
// the checkpoints wrote them all. With the visitor first, a visitor's rows sit together. Only the
// writer looks rows up here, always by the whole key.
type KeyColumn = 'property_id' | 'day' | 'visitor_id' | 'dimension' | 'value';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table analytics_day_value_visitors drop constraint analytics_day_value_visitors_pk,
      add constraint analytics_day_value_visitors_pk primary key (property_id, day, visitor_id, dimension, value)`.execute(db);
    return;
  }
  await rebuild(db, ['property_id', 'day', 'visitor_id', 'dimension', 'value']);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table analytics_day_value_visitors drop constraint analytics_day_value_visitors_pk,
      add constraint analytics_day_value_visitors_pk primary key (property_id, day, dimension, value, visitor_id)`.execute(db);
    return;
  }
  await rebuild(db, ['property_id', 'day', 'dimension', 'value', 'visitor_id']);
}

async function rebuild(db: Kysely<any>, key: KeyColumn[]): Promise<void> {
  await db.schema
    .createTable('analytics_day_value_visitors_next')
    .addColumn('property_id', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('dimension', 'text', notNull)
    .addColumn('value', 'text', notNull)
    .addColumn('visitor_id', 'text', notNull)
    .addColumn('n', 'integer', notNull)
    .addPrimaryKeyConstraint('analytics_day_value_visitors_pk', key)
    .modifyEnd(sql`without rowid`)
    .execute();
  await sql`insert into analytics_day_value_visitors_next (property_id, day, dimension, value, visitor_id, n)
    select property_id, day, dimension, value, visitor_id, n from analytics_day_value_visitors`.execute(db);
  await db.schema.dropTable('analytics_day_value_visitors').execute();
  await db.schema.alterTable('analytics_day_value_visitors_next').renameTo('analytics_day_value_visitors').execute();
}
