// While a backup runs, stored files are not deleted: the database snapshot is taken first and the
// files are archived after it, so a file that the snapshot refers to must still be there when the
// archive reaches it. The backup writes a hold (with an expiry it keeps moving forward); every
// path that deletes stored files of committed deletions checks it first and waits.
import os from 'node:os';
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import { iso, MINUTE } from '../platform/clock.js';

export const BACKUP_HOLD_KEY = 'backup_in_progress';
/** A hold lapses this long after its last refresh (a backup that died stops holding). */
export const BACKUP_HOLD_MS = 2 * MINUTE;
export const BACKUP_HOLD_REFRESH_MS = 30_000;

interface HoldValue {
  until: string;
  pid: number;
  host: string;
  started_at: string;
}

/** How soon a held deletion looks again (a finished backup releases its hold before it lapses). */
export const HOLD_RECHECK_MS = 15_000;

/** When a deletion held by a backup should be tried again. */
export function retryAfterHold(ctx: Pick<Ctx, 'clock'>, heldUntil: Date): Date {
  return new Date(Math.min(heldUntil.getTime(), ctx.clock.now().getTime() + HOLD_RECHECK_MS));
}

/** The time file deletion is held until, or undefined when it may go ahead now. */
export async function fileDeletionHeldUntil(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<Date | undefined> {
  const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', BACKUP_HOLD_KEY).executeTakeFirst();
  if (!row) return undefined;
  let until: number;
  try {
    until = Date.parse((JSON.parse(row.value) as HoldValue).until);
  } catch {
    return undefined;
  }
  return Number.isFinite(until) && until > ctx.clock.now().getTime() ? new Date(until) : undefined;
}

async function writeHold(db: Db, value: HoldValue): Promise<void> {
  const text = JSON.stringify(value);
  await db
    .insertInto('server_meta')
    .values({ key: BACKUP_HOLD_KEY, value: text })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: text }))
    .execute();
}

/** Holds file deletion until release() (or until the hold lapses when this process dies). */
export async function holdFileDeletion(ctx: Pick<Ctx, 'db' | 'clock'>): Promise<{ release(): Promise<void> }> {
  const started = iso(ctx.clock.now());
  const value = () => ({ until: iso(ctx.clock.now().getTime() + BACKUP_HOLD_MS), pid: process.pid, host: os.hostname(), started_at: started });
  await writeHold(ctx.db, value());
  let failure: unknown;
  const timer = setInterval(() => {
    writeHold(ctx.db, value()).catch((error) => (failure = error));
  }, BACKUP_HOLD_REFRESH_MS);
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await ctx.db.deleteFrom('server_meta').where('key', '=', BACKUP_HOLD_KEY).execute();
      if (failure) throw new Error(`the backup could not keep file deletion on hold: ${failure instanceof Error ? failure.message : String(failure)}`);
    },
  };
}
