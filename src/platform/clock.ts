/** The one source of "now". Tests pass a ManualClock and move it instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class ManualClock implements Clock {
  private ms: number;
  private deadlines: { at: number; controller: AbortController }[] = [];
  constructor(start: Date | string | number = Date.now()) {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
    this.fireDeadlines();
  }
  set(to: Date | string | number): void {
    this.ms = new Date(to).getTime();
    this.fireDeadlines();
  }
  /** A signal that aborts once the clock is moved `ms` or more past now (see deadlineSignal). */
  signalAfter(ms: number): AbortSignal {
    const controller = new AbortController();
    this.deadlines.push({ at: this.ms + ms, controller });
    return controller.signal;
  }
  private fireDeadlines() {
    const due = this.deadlines.filter((d) => d.at <= this.ms);
    this.deadlines = this.deadlines.filter((d) => d.at > this.ms);
    for (const d of due) d.controller.abort(new DOMException('the deadline passed', 'TimeoutError'));
  }
}

/**
 * An AbortSignal that fires `ms` from now by the given clock: a real timer on the system clock,
 * and on a ManualClock when a test moves the clock past it (deadlines are tested without sleeping).
 */
export function deadlineSignal(clock: Clock, ms: number): AbortSignal {
  const manual = clock as Partial<ManualClock>;
  return typeof manual.signalAfter === 'function' ? manual.signalAfter.call(clock, ms) : AbortSignal.timeout(ms);
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** ISO 8601 UTC text: the single representation of time in storage and in the API. */
export function iso(d: Date | number): string {
  return new Date(d).toISOString();
}
