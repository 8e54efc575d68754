import type { Kysely } from 'kysely';

// The panel's answers at scale (issue 42, bench/panel-api). A report reads report_durations through
// report_durations_day, which 0020 made covering; 0046 then added business_seconds, which a report
// reads too, so every duration row of the period was fetched from the table as well (a year's
// report: ~300,000 row lookups at 150,000 conversations). The index carries the column again.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('report_durations_day').execute();
  await db.schema
    .createIndex('report_durations_day')
    .on('report_durations')
    .columns(['workspace_id', 'day', 'kind', 'seconds', 'business_seconds', 'inbox_id', 'member_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('report_durations_day').execute();
  await db.schema
    .createIndex('report_durations_day')
    .on('report_durations')
    .columns(['workspace_id', 'day', 'kind', 'seconds', 'inbox_id', 'member_id'])
    .execute();
}
