// Fixed-window rate limits (per IP address, per session…), counted in the database so that every
// server process sharing it counts the same hits (behind a load balancer one client's requests
// reach several processes). One statement per hit: the counter row is created, counted up, or
// started afresh when its window has ended. Keys are stored hashed (an IP address is not kept).
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import { type Clock, iso } from './clock.js';
import { rateLimited } from './errors.js';

export class RateLimiter {
  constructor(
    private readonly deps: { db: Db; clock: Clock },
    /** Names the limit, so that two limits never share a counter. */
    readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Counts one hit for key; throws 429 (with Retry-After) when the window's limit is used up. */
  async hit(key: string, message?: string): Promise<void> {
    const now = this.deps.clock.now();
    const nowText = iso(now);
    const ends = iso(now.getTime() + this.windowMs);
    const counter = createHash('sha256').update(`${this.name}\0${key}`).digest('base64url');
    // Hits past the limit are counted too: the window (and so Retry-After) does not move.
    const { rows } = await sql<{ count: number; window_ends_at: string }>`insert into rate_limits (key, window_ends_at, count)
      values (${counter}, ${ends}, 1)
      on conflict (key) do update set
        count = case when rate_limits.window_ends_at <= ${nowText} then 1 else rate_limits.count + 1 end,
        window_ends_at = case when rate_limits.window_ends_at <= ${nowText} then excluded.window_ends_at else rate_limits.window_ends_at end
      returning count, window_ends_at`.execute(this.deps.db);
    const row = rows[0];
    if (Number(row.count) > this.limit) throw rateLimited(Math.max(1, Math.ceil((Date.parse(row.window_ends_at) - now.getTime()) / 1000)), message);
  }
}

/** Retention: at most `batch` counters whose window ended before `now`. */
export async function deleteEndedRateWindows(db: Db, now: Date, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('rate_limits')
    .where('key', 'in', (eb) => eb.selectFrom('rate_limits as r').select('r.key').where('r.window_ends_at', '<', iso(now)).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * A limit counted in the database (it survives restarts and holds across processes): at most
 * `limit` hits in `windowMs`. The caller stores its hits (an activity log line, a test row) and
 * reads those after `windowStart` oldest first; `checkWindow` throws 429 with the seconds until the
 * oldest one leaves the window.
 */
export interface DbWindow {
  limit: number;
  windowMs: number;
  /** What is counted, for the message: "connection tests", "test messages". */
  what: string;
}

/** Connection tests (a migration's mailbox, a channel's SMTP account): 5 per 10 minutes each. */
export const CONNECTION_TEST_WINDOW: DbWindow = { limit: 5, windowMs: 10 * 60_000, what: 'connection tests' };

export function windowStart(clock: Clock, w: DbWindow): string {
  return new Date(clock.now().getTime() - w.windowMs).toISOString();
}

export function checkWindow(clock: Clock, w: DbWindow, recentOldestFirst: readonly string[]): void {
  if (recentOldestFirst.length < w.limit) return;
  const retry = Math.max(1, Math.ceil((new Date(recentOldestFirst[0]).getTime() + w.windowMs - clock.now().getTime()) / 1000));
  throw rateLimited(retry, `at most ${w.limit} ${w.what} per ${Math.round(w.windowMs / 60_000)} minutes; try again in ${retry} s`);
}
