import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// The panel's lists of one assignee ("Mine", a member's closed) and of one inbox, in activity order
// (issue 42, bench/panel-api: 150,000 conversations). Without these, "closed, assigned to me" read
// every conversation of the assignee through conversations_assignee and sorted them (SQLite: 150–195
// ms a page), and an inbox's list walked the workspace's conversations of that status, skipping
// other inboxes' (deep pages of a small inbox). Each index is read in order: the page's rows are the
// first 101 entries after the cursor.
const INDEXES = [
  { name: 'conversations_assignee_activity', columns: ['workspace_id', 'assignee_id', 'status', 'last_message_at', 'id'] },
  { name: 'conversations_inbox_activity', columns: ['workspace_id', 'inbox_id', 'status', 'last_message_at', 'id'] },
];

// SQLite: a report's medians and p90 over its period are the values at those ranks, read in order
// by kind and value (src/reports/durations.ts); calendar and business seconds (rows from before 0046
// have none: calendar time). Postgres computes them with percentile_cont/percentile_disc instead.
const REPORT_INDEXES = ['report_durations_kind_seconds', 'report_durations_kind_business'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of INDEXES) await db.schema.createIndex(index.name).on('conversations').columns(index.columns).execute();
  if (!isPostgres(db)) {
    await sql`create index report_durations_kind_seconds on report_durations (workspace_id, kind, seconds, day, inbox_id, member_id)`.execute(db);
    // The raw columns too: without them SQLite does not take the expression index as covering.
    await sql`create index report_durations_kind_business on report_durations
      (workspace_id, kind, coalesce(business_seconds, seconds), day, inbox_id, member_id, business_seconds, seconds)`.execute(db);
  }
  // A SQLite database that has statistics (sqlite_stat1) gets them for the new indexes too: without,
  // the planner weighs them against measured ones by guesses. Postgres's autovacuum keeps its own.
  if (!isPostgres(db)) {
    const analyzed = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat1'`.execute(db);
    if (Number(analyzed.rows[0]?.n ?? 0) > 0)
      for (const name of [...INDEXES.map((i) => i.name), ...REPORT_INDEXES]) await sql`analyze ${sql.id(name)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of INDEXES) await db.schema.dropIndex(index.name).execute();
  if (!isPostgres(db)) for (const name of REPORT_INDEXES) await db.schema.dropIndex(name).execute();
}
