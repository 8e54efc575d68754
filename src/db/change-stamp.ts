// Whether anything was committed to a SQLite database since a given moment, without a statement.
//
// In WAL mode every connection of every process shares the wal-index (the `-shm` file beside the
// database), whose header (https://www.sqlite.org/walformat.html, "The WAL-Index Header") every
// write transaction rewrites when it commits: a change counter, the last valid frame, salts and a
// checksum over them, kept twice (the second copy first). Reading those 96 bytes is one `pread`,
// where a statement such as `PRAGMA data_version` opens and closes a read transaction (the WAL read
// lock's two `fcntl` calls and SQLite's pager work): ~1–3 µs instead of ~4–7 µs per request here.
//
// An equal header means no connection committed in between. A torn read (a writer updating the
// header as it is read: the copies differ) or a header not yet initialised gives no stamp, and the
// caller reads the rows. The header also changes without a commit when a writer restarts the WAL
// after a checkpoint: that only makes the caller read once more. Outside WAL mode (or for an
// in-memory database) the statement is used instead.
import fs from 'node:fs';
import type SQLite from 'better-sqlite3';
import { sqliteConnectionOf } from './connection.js';

/** Size of one copy of the wal-index header; the file starts with two. */
const HEADER_BYTES = 48;
/** Offset of `isInit` (1 once the header was written) in a copy. */
const IS_INIT = 12;

type Source = { kind: 'header'; fd: number; buffer: Buffer } | { kind: 'statement'; statement: SQLite.Statement };

const sources = new WeakMap<SQLite.Database, Source>();
// The `-shm` descriptor lives as long as its connection object.
const descriptors = new FinalizationRegistry<number>((fd) => fs.close(fd, () => {}));

function sourceOf(sqlite: SQLite.Database): Source {
  let source = sources.get(sqlite);
  if (source) return source;
  const wal = !sqlite.memory && String(sqlite.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
  let fd: number | undefined;
  if (wal) {
    try {
      fd = fs.openSync(`${sqlite.name}-shm`, 'r');
    } catch {
      fd = undefined;
    }
  }
  if (fd !== undefined) {
    source = { kind: 'header', fd, buffer: Buffer.alloc(2 * HEADER_BYTES) };
    descriptors.register(sqlite, fd);
  } else {
    // `PRAGMA data_version` moves when another connection commits; `total_changes()` counts the
    // rows this connection changed. Both only grow, so their sum moves whenever either does.
    source = { kind: 'statement', statement: sqlite.prepare('select data_version + total_changes() from pragma_data_version').pluck() };
  }
  sources.set(sqlite, source);
  return source;
}

/**
 * The change stamp of `db`'s SQLite database now: equal stamps mean nothing was committed in
 * between, by any connection of any process. Undefined on Postgres, while a transaction is open on
 * the connection (its uncommitted changes are not anyone's yet: read the rows then), and when the
 * wal-index header could not be read whole.
 */
export function sqliteChangeStamp(db: object): string | undefined {
  const sqlite = sqliteConnectionOf(db);
  if (!sqlite?.open || sqlite.inTransaction) return undefined;
  const source = sourceOf(sqlite);
  if (source.kind === 'statement') return String(source.statement.get());
  const { fd, buffer } = source;
  let read: number;
  try {
    read = fs.readSync(fd, buffer, 0, buffer.length, 0);
  } catch {
    return undefined;
  }
  if (read < buffer.length || buffer[IS_INIT] !== 1) return undefined;
  if (buffer.compare(buffer, HEADER_BYTES, 2 * HEADER_BYTES, 0, HEADER_BYTES) !== 0) return undefined;
  return buffer.toString('latin1', 0, HEADER_BYTES);
}
