// buildServices: the one place that builds everything the program shares. No module-level singletons.
import { lookup as dnsLookup, resolveMx as dnsResolveMx } from 'node:dns/promises';
import { EventEmitter } from 'node:events';
import type { Config } from './config.js';
import { TransactionBatcher } from './db/batch.js';
import { type DbHandle, type DialectName, openDatabase } from './db/connection.js';
import type { Db } from './db/schema.js';
import { type Clock, systemClock } from './platform/clock.js';
import { MasterKeyError, masterKeySealer, type Sealer } from './platform/crypto.js';
import type { DurableFs } from './platform/durable.js';
import { EpochCache } from './platform/epoch-cache.js';
import { newId } from './platform/ids.js';
import { JobRunner } from './platform/jobs.js';
import { createLogger, type Logger } from './platform/log.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { createStorage, type Storage } from './platform/storage.js';
import { createSystemMailer, type SystemMailer } from './platform/system-mail.js';

/** Everything a service function may need; routes, commands and jobs all pass this (or a copy with db = a transaction). */
export interface Ctx {
  config: Config;
  log: Logger;
  clock: Clock;
  db: Db;
  dialect: DialectName;
  sealer: Sealer;
  storage: Storage;
  metrics: Metrics;
  jobs: JobRunner;
  systemMail: SystemMailer;
  /** In-process wake-up signals ('events' when events were written, and feature-specific ones). */
  hub: EventEmitter;
  /** This process among the servers sharing the database: its presence record and its Postgres application_name. */
  instanceId: string;
  /** Group commit for frequent small write transactions (inbound mail); answers once committed and on disk. */
  writes: TransactionBatcher;
  /** Name resolution for outbound connections (webhooks, IMAP); tests swap in their own answers. */
  lookup: HostLookup;
  /** MX records of a domain (finding a mailbox's provider); tests swap in their own answers. */
  resolveMx: MxLookup;
  /** Credentials already checked, valid while the database's credentials epoch stays the same (src/auth/credentials.ts). */
  credentialCache: EpochCache<unknown>;
}

export type HostLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;
export type MxLookup = (domain: string) => Promise<{ exchange: string; priority: number }[]>;

/** Every address the system resolver gives for a name, in its order. */
export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface App extends Ctx {
  handle: DbHandle;
  close(): Promise<void>;
}

export interface BuildOptions {
  clock?: Clock;
  log?: Logger;
  /** Create $SVC_DATA_DIR/master.key when no key is configured (serve does; most commands do not). */
  createMasterKey?: boolean;
  jobPollMs?: number;
  lookup?: HostLookup;
  resolveMx?: MxLookup;
  /** The flushing file operations of local storage and the SQLite WAL; tests record their order. */
  durable?: DurableFs;
}

export function buildServices(config: Config, opts: BuildOptions = {}): App {
  const log = opts.log ?? createLogger({ level: config.logLevel });
  const clock = opts.clock ?? systemClock;
  const sealer = masterKeySealer(config, log, { create: opts.createMasterKey ?? false });
  const instanceId = newId('srv');
  const handle = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePool.size,
    waitMs: config.databasePool.waitMs,
    readers: config.databaseReaders,
    applicationName: applicationName(instanceId),
    durable: opts.durable,
  });
  const hub = new EventEmitter();
  hub.setMaxListeners(0);
  const jobs = new JobRunner({ db: handle.db, clock, log }, { pollMs: opts.jobPollMs });
  const systemMail = createSystemMailer(config, log);
  const storage = createStorage(config, opts.durable);
  const app: App = {
    config,
    log,
    clock,
    db: handle.db,
    dialect: handle.dialect,
    sealer,
    storage,
    metrics: createMetrics(),
    jobs,
    systemMail,
    hub,
    instanceId,
    writes: new TransactionBatcher(handle.db, { flushCommits: () => handle.flushCommits(), flushFiles: (files) => storage.flushWritten(files) }),
    lookup: opts.lookup ?? systemLookup,
    resolveMx: opts.resolveMx ?? ((domain) => dnsResolveMx(domain)),
    credentialCache: new EpochCache(),
    handle,
    async close() {
      await jobs.stop();
      systemMail.close();
      await handle.close();
    },
  };
  hub.on('events', () => jobs.wake());
  return app;
}

/** A server's Postgres sessions carry its instance id, so that its own notifications can be told apart (src/events/watch.ts). */
export function applicationName(instanceId: string): string {
  return `svc ${instanceId}`;
}

const KEY_CHECK = 'master_key_check';
const KEY_CHECK_TEXT = 'svc master key check';

/**
 * Detects a wrong master key before anything tries to open a sealed secret: the first start seals a
 * known text; every later start must be able to open it. A key generated at this start (no
 * SVC_MASTER_KEY, no master.key) is written only for a new database; data that exists already
 * was sealed with another key, so the start is refused instead.
 */
export async function verifyMasterKey(ctx: Pick<Ctx, 'db' | 'sealer'>): Promise<void> {
  const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', KEY_CHECK).executeTakeFirst();
  const generated = ctx.sealer.generatedKeyFile;
  if (row && generated) {
    throw new MasterKeyError(
      `this data was written with a master key that is not here; set SVC_MASTER_KEY, or put the key in ${generated}, to the key it was written with`,
    );
  }
  if (!row) {
    // A new database: a key generated at this start is kept now, before anything is sealed with it.
    ctx.sealer.saveGeneratedKey();
    await ctx.db
      .insertInto('server_meta')
      .values({ key: KEY_CHECK, value: ctx.sealer.seal(KEY_CHECK_TEXT) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    return;
  }
  let opened: string | undefined;
  try {
    opened = ctx.sealer.open(row.value);
  } catch {
    opened = undefined;
  }
  if (opened !== KEY_CHECK_TEXT) {
    throw new MasterKeyError(
      'the master key does not match the one this data was written with; start with the same SVC_MASTER_KEY (or master.key) that was used before',
    );
  }
}
