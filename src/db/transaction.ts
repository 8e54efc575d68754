import type { Kysely, Transaction } from 'kysely';
import type { Database, Db } from './schema.js';

/** Runs work in a transaction: the caller's when `db` already is one, else a new one. */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<Database>);
  return (db as Kysely<Database>).transaction().execute(work);
}
