import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// A past day's report totals, medians and p90s (src/reports/day-figures.ts), kept once computed: a
// year's report summed and ranked 365 days of rows on every request (most of its time,
// bench/panel-api). A row holds one day's figures for one scope (the inboxes and member a report
// asked for). Any change to that day's report_days or report_durations rows deletes the day's rows
// of every scope, by trigger, so a kept figure is never stale.
const SOURCES = ['report_days', 'report_durations'];
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('report_day_figures')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('figures', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('report_day_figures_pk', ['workspace_id', 'day', 'scope'])
    .execute();
  if (isPostgres(db)) {
    // A long period's medians by rank, read in value order (SQLite has had these since 0065).
    await sql`create index report_durations_kind_seconds on report_durations (workspace_id, kind, seconds, day, inbox_id, member_id)`.execute(db);
    await sql`create index report_durations_kind_business on report_durations
      (workspace_id, kind, (coalesce(business_seconds, seconds)), day, inbox_id, member_id, business_seconds, seconds)`.execute(db);
  }
  const forget = (row: 'new' | 'old') => `delete from report_day_figures where workspace_id = ${row}.workspace_id and day = ${row}.day`;
  if (isPostgres(db)) {
    await sql
      .raw(`create function report_day_figures_forget() returns trigger language plpgsql as $$
        begin
          if tg_op <> 'DELETE' then ${forget('new')}; end if;
          if tg_op <> 'INSERT' then ${forget('old')}; end if;
          return null;
        end $$`)
      .execute(db);
    for (const table of SOURCES)
      await sql
        .raw(`create trigger ${table}_forget_figures after insert or update or delete on ${table} for each row execute function report_day_figures_forget()`)
        .execute(db);
    return;
  }
  for (const table of SOURCES) {
    await sql.raw(`create trigger ${table}_forget_figures_added after insert on ${table} begin ${forget('new')}; end`).execute(db);
    await sql.raw(`create trigger ${table}_forget_figures_removed after delete on ${table} begin ${forget('old')}; end`).execute(db);
    await sql.raw(`create trigger ${table}_forget_figures_changed after update on ${table} begin ${forget('old')}; ${forget('new')}; end`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const table of SOURCES) await sql.raw(`drop trigger ${table}_forget_figures on ${table}`).execute(db);
    await sql.raw('drop function report_day_figures_forget()').execute(db);
    for (const name of ['report_durations_kind_seconds', 'report_durations_kind_business']) await db.schema.dropIndex(name).execute();
  } else {
    for (const table of SOURCES) for (const t of ['added', 'removed', 'changed']) await sql.raw(`drop trigger ${table}_forget_figures_${t}`).execute(db);
  }
  await db.schema.dropTable('report_day_figures').execute();
}
