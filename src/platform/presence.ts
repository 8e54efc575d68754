// Every running server says so in the database (one `server_meta` record per process: pid, host,
// last seen), so that `svc restore` can refuse to replace data under one, and so that a starting
// server knows whether it is the only one. Work that a killed process held under a lease is taken
// back at start only when no other server runs (see `serversRunningBesides`): with several servers
// on one Postgres, a lease may belong to a live process, and then it is left to run out.
// Real time on purpose: this is about processes being alive, not about the (movable) clock of the data.
import os from 'node:os';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import type { BackgroundPart } from './background.js';

/** Records are `server_running:<instance id>`; a server from before several processes wrote the bare key. */
export const PRESENCE_KEY = 'server_running';
const PRESENCE_PREFIX = `${PRESENCE_KEY}:`;
export const PRESENCE_EVERY_MS = 15_000;
/** A server on another host counts as running while it was seen this recently. */
export const PRESENCE_FRESH_MS = 4 * PRESENCE_EVERY_MS;

export interface Presence {
  pid: number;
  host: string;
  started_at: string;
  seen_at: string;
  /** Absent in a record written before several processes (the bare key). */
  instance?: string;
}

/** The condition on `server_meta.key` that finds every presence record (for SQL written elsewhere). */
export const PRESENCE_KEY_SQL = `(key = '${PRESENCE_KEY}' or key like '${PRESENCE_PREFIX}%')`;

export function presenceKey(instance: string): string {
  return PRESENCE_PREFIX + instance;
}

async function writePresence(db: Db, p: Presence & { instance: string }): Promise<void> {
  const value = JSON.stringify(p);
  await db
    .insertInto('server_meta')
    .values({ key: presenceKey(p.instance), value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

export function parsePresence(value: string): Presence | undefined {
  try {
    return JSON.parse(value) as Presence;
  } catch {
    return undefined;
  }
}

/** Every presence record there is (live or not), with its key. */
export async function readPresences(db: Db): Promise<{ key: string; presence: Presence }[]> {
  const rows = await db
    .selectFrom('server_meta')
    .select(['key', 'value'])
    .where((eb) => eb.or([eb('key', '=', PRESENCE_KEY), eb('key', 'like', `${PRESENCE_PREFIX}%`)]))
    .execute();
  return rows.flatMap((r) => {
    const presence = parsePresence(r.value);
    return presence ? [{ key: r.key, presence }] : [];
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the recorded server still runs: on this host by its process, elsewhere by how fresh the record is. */
export function presenceIsLive(p: Presence, now = Date.now()): boolean {
  if (p.host === os.hostname()) return processAlive(p.pid);
  return now - Date.parse(p.seen_at) < PRESENCE_FRESH_MS;
}

/** The other servers running on this database now (this server's own record left out). */
export async function serversRunningBesides(ctx: Pick<Ctx, 'db' | 'instanceId'>): Promise<Presence[]> {
  const mine = presenceKey(ctx.instanceId);
  return (await readPresences(ctx.db)).filter((r) => r.key !== mine && presenceIsLive(r.presence)).map((r) => r.presence);
}

/**
 * At start, a lease left by a process that died (kill -9) belongs to nobody, so its work can
 * continue at once instead of after the lease runs out. That is only known when no other server
 * runs: with another one running, the lease may be its own, so it is left to run out.
 */
export async function aloneOnDatabase(ctx: Pick<Ctx, 'db' | 'instanceId'>): Promise<boolean> {
  return (await serversRunningBesides(ctx)).length === 0;
}

export const presenceBackground: BackgroundPart = {
  name: 'presence',
  async start(ctx: Ctx) {
    const started = new Date().toISOString();
    const key = presenceKey(ctx.instanceId);
    const beat = () =>
      writePresence(ctx.db, { pid: process.pid, host: os.hostname(), started_at: started, seen_at: new Date().toISOString(), instance: ctx.instanceId });
    // Records of servers that are gone are removed, so that the list stays as long as the servers running.
    const gone = (await readPresences(ctx.db)).filter((r) => r.key !== key && !presenceIsLive(r.presence)).map((r) => r.key);
    if (gone.length) await ctx.db.deleteFrom('server_meta').where('key', 'in', gone).execute();
    await beat();
    const timer = setInterval(() => beat().catch((error) => ctx.log.warn('presence not recorded', { error })), PRESENCE_EVERY_MS);
    timer.unref();
    return {
      async stop() {
        clearInterval(timer);
        await ctx.db
          .deleteFrom('server_meta')
          .where('key', '=', key)
          .execute()
          .catch(() => {});
      },
    };
  },
};
