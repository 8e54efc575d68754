// Whether anything was committed to a SQLite database since a given moment, for one statement that
// touches no table. `PRAGMA data_version` moves when ANOTHER connection (another process, a `svc`
// command, a second connection of this one) commits; `total_changes()` counts the rows this
// connection changed, triggers' rows included, committed or rolled back. Both only grow, so their
// sum moves whenever either does: an equal stamp means no connection changed a row in between.
import type SQLite from 'better-sqlite3';
import { sqliteConnectionOf } from './connection.js';

const statements = new WeakMap<SQLite.Database, SQLite.Statement>();

/**
 * The change stamp of `db`'s SQLite connection now; undefined on Postgres and while a transaction
 * is open on the connection (its uncommitted changes are not anyone's yet: read the rows then).
 */
export function sqliteChangeStamp(db: object): number | undefined {
  const sqlite = sqliteConnectionOf(db);
  if (!sqlite?.open || sqlite.inTransaction) return undefined;
  let statement = statements.get(sqlite);
  if (!statement) {
    statement = sqlite.prepare('select data_version + total_changes() from pragma_data_version').pluck();
    statements.set(sqlite, statement);
  }
  return Number(statement.get());
}
