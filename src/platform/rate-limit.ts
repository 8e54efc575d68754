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
