// Settings the event reactions read for every event (a workspace's webhook endpoint filters, an
// inbox's greeting switch) rarely change, so their answers are kept per database while the reaction
// settings epoch (one row, moved by triggers in the transaction of every change: migration 0026)
// stays the same. A change made by this process, another server process or a `svc` command is seen
// by the next event recorded after it commits.
//
// Reactions run inside the recording transaction: the epoch is read once per transaction (a
// group-committed batch of mail reads it once). No transaction that records events also changes
// these settings after recording one, so the epoch read at its first event still holds at its last.
import { reusableQuery } from '../db/reusable-query.js';
import type { Db } from '../db/schema.js';
import { EpochCache } from '../platform/epoch-cache.js';

const readEpoch = reusableQuery((db) => db.selectFrom('reaction_settings_epoch').select('epoch').where('id', '=', 1));

/** Per database (its kysely adapter, shared by the database and all its transactions). */
const caches = new WeakMap<object, EpochCache<unknown>>();
/** The epoch each open transaction read. */
const epochOfTransaction = new WeakMap<object, number>();

async function epochOf(db: Db): Promise<number> {
  if (db.isTransaction) {
    const known = epochOfTransaction.get(db);
    if (known !== undefined) return known;
  }
  const [row] = await readEpoch(db);
  const epoch = Number(row.epoch);
  if (db.isTransaction) epochOfTransaction.set(db, epoch);
  return epoch;
}

/**
 * The cached answer under `key` (a name that says what and whose: `webhooks:<workspace>`), or what
 * `load` reads, kept while the epoch holds. `load` must read only what the epoch's triggers cover.
 */
export async function cachedReactionSetting<V>(db: Db, key: string, load: () => Promise<V>): Promise<V> {
  const adapter = db.getExecutor().adapter;
  let cache = caches.get(adapter) as EpochCache<V> | undefined;
  if (!cache) caches.set(adapter, (cache = new EpochCache<V>(10_000)));
  const epoch = await epochOf(db);
  cache.sync(epoch);
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const value = await load();
  cache.set(epoch, key, value);
  return value;
}
