// In-process fixed-window rate limits (per IP address, per session…). They protect one server
// process from floods; limits that must survive restarts are counted in the database instead.
import type { Clock } from './clock.js';
import { rateLimited } from './errors.js';

export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly clock: Clock,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Counts one hit for key; throws 429 (with Retry-After) when the window's limit is used up. */
  hit(key: string, message?: string): void {
    const now = this.clock.now().getTime();
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size > 50_000) this.sweep(now);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= this.limit) throw rateLimited(Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)), message);
    w.count++;
  }

  private sweep(now: number) {
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
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
