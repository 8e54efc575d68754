// A reader thread of src/db/readers.ts: its own read-only connection to the server's SQLite file
// (WAL: it reads the last committed state while the main connection writes), which runs the
// compiled reads it is sent, one at a time, and answers their rows.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

export interface ReaderData {
  file: string;
  busyTimeoutMs: number;
}

/** A read to run: the SQL text and parameters of a compiled kysely query. */
export interface ReadRequest {
  sql: string;
  parameters: readonly unknown[];
}

export type ReadAnswer = { rows: unknown[] } | { error: { message: string; code: string | undefined } };

/** Statements kept per thread (the reads sent here are a few dozen texts). */
const CACHED_STATEMENTS = 200;
/** As in the main connection's cache (connection.ts): `in` lists change length from call to call. */
const MANY_PARAMETERS = 32;

const { file, busyTimeoutMs } = workerData as ReaderData;
const port = parentPort!;
// Read-only: a write sent here by mistake fails (SQLITE_READONLY) instead of bypassing the main
// connection's transactions. Percentile functions (median, percentile_disc) are compiled into
// better-sqlite3's SQLite, as on the main connection; svc registers no functions of its own.
const db = new SQLite(file, { readonly: true, fileMustExist: true });
db.pragma(`busy_timeout = ${busyTimeoutMs}`);

const statements = new Map<string, SQLite.Statement>();

function statementFor(text: string): SQLite.Statement {
  let statement = statements.get(text);
  if (statement) {
    statements.delete(text);
    statements.set(text, statement);
    return statement;
  }
  statement = db.prepare(text);
  if (!statement.reader) throw Object.assign(new Error('only reads run on a reader thread'), { code: 'SVC_NOT_A_READ' });
  if (parameterCount(text) <= MANY_PARAMETERS) {
    if (statements.size >= CACHED_STATEMENTS) statements.delete(statements.keys().next().value!);
    statements.set(text, statement);
  }
  return statement;
}

function parameterCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('?'); i !== -1; i = text.indexOf('?', i + 1)) n++;
  return n;
}

port.on('message', (request: ReadRequest | 'close') => {
  if (request === 'close') {
    db.close();
    port.close();
    return;
  }
  let answer: ReadAnswer;
  try {
    answer = { rows: statementFor(request.sql).all(request.parameters as unknown[]) };
  } catch (error) {
    const e = error as { message?: string; code?: unknown };
    answer = { error: { message: String(e?.message ?? error), code: typeof e?.code === 'string' ? e.code : undefined } };
  }
  port.postMessage(answer);
});
