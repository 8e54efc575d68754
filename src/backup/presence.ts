// A running server says so in the database (pid, host, last seen), so that `svc restore` can refuse
// to replace data under it. Real time on purpose: this is about the process being alive, not about
// the (movable) clock of the data.
import os from 'node:os';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import type { BackgroundPart } from '../platform/background.js';

export const PRESENCE_KEY = 'server_running';
export const PRESENCE_EVERY_MS = 15_000;
/** A server on another host counts as running while it was seen this recently. */
export const PRESENCE_FRESH_MS = 4 * PRESENCE_EVERY_MS;

export interface Presence {
  pid: number;
  host: string;
  started_at: string;
  seen_at: string;
}

async function writePresence(db: Db, p: Presence): Promise<void> {
  const value = JSON.stringify(p);
  await db
    .insertInto('server_meta')
    .values({ key: PRESENCE_KEY, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}

export async function readPresence(db: Db): Promise<Presence | undefined> {
  const row = await db.selectFrom('server_meta').select('value').where('key', '=', PRESENCE_KEY).executeTakeFirst();
  if (!row) return undefined;
  try {
    return JSON.parse(row.value) as Presence;
  } catch {
    return undefined;
  }
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

export const presenceBackground: BackgroundPart = {
  name: 'presence',
  async start(ctx: Ctx) {
    const started = new Date().toISOString();
    const beat = () => writePresence(ctx.db, { pid: process.pid, host: os.hostname(), started_at: started, seen_at: new Date().toISOString() });
    await beat();
    const timer = setInterval(() => beat().catch((error) => ctx.log.warn('presence not recorded', { error })), PRESENCE_EVERY_MS);
    timer.unref();
    return {
      async stop() {
        clearInterval(timer);
        // Only our own record: another process may have written its own since.
        const p = await readPresence(ctx.db).catch(() => undefined);
        if (p && p.pid === process.pid && p.host === os.hostname())
          await ctx.db
            .deleteFrom('server_meta')
            .where('key', '=', PRESENCE_KEY)
            .execute()
            .catch(() => {});
      },
    };
  },
};
