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

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of INDEXES) await db.schema.createIndex(index.name).on('conversations').columns(index.columns).execute();
  // A SQLite database that has statistics (sqlite_stat1) gets them for the new indexes too: without,
  // the planner weighs them against measured ones by guesses. Postgres's autovacuum keeps its own.
  if (!isPostgres(db)) {
    const analyzed = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat1'`.execute(db);
    if (Number(analyzed.rows[0]?.n ?? 0) > 0) for (const index of INDEXES) await sql`analyze ${sql.id(index.name)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of INDEXES) await db.schema.dropIndex(index.name).execute();
}
