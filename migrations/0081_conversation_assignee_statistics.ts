import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// Postgres: how many conversations of a status are unassigned, from a sample of the pairs rather than
// the product of the two columns' own figures. Without it the unassigned open list (bench/panel-api,
// 150,000 conversations) was estimated at 63 rows instead of 1,485, so Postgres read every unassigned
// open conversation from the assignee index and sorted them (3 ms) instead of walking the open
// conversations' activity index to the page's end (0.4 ms): `assignee_id is null` does not give it
// the assignee index's order as an equality would. SQLite plans these with its own statistics and
// has no such object.
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create statistics conversations_status_assignee (mcv) on status, assignee_id from conversations`.execute(db);
  await sql`analyze conversations`.execute(db);
}
