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
  /** A deadline that fires once the clock is moved `ms` or more past now (see whenTimeUp). */
  deadlineAfter(ms: number): Deadline {
    const controller = new AbortController();
    const entry = { at: this.ms + ms, controller };
    this.deadlines.push(entry);
    return {
      signal: controller.signal,
      clear: () => {
        this.deadlines = this.deadlines.filter((d) => d !== entry);
      },
    };
  }
  private fireDeadlines() {
    const due = this.deadlines.filter((d) => d.at <= this.ms);
    this.deadlines = this.deadlines.filter((d) => d.at > this.ms);
    for (const d of due) d.controller.abort(new DOMException('the deadline passed', 'TimeoutError'));
  }
}

/** A signal that aborts when time is up; clear() once the work ended in time. */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

/**
 * Calls `onTimeUp` once `ms` pass by the given clock: a real timer on the system clock, and on a
 * ManualClock when a test moves the clock past it (deadlines are tested without sleeping). clear()
 * once the work ended in time. A callback rather than an AbortSignal: no AbortController per use.
 */
export function whenTimeUp(clock: Clock, ms: number, onTimeUp: () => void): { clear(): void } {
  const manual = clock as Partial<ManualClock>;
  if (typeof manual.deadlineAfter === 'function') {
    const deadline = manual.deadlineAfter.call(clock, ms);
    deadline.signal.addEventListener('abort', onTimeUp, { once: true });
    return deadline;
  }
  const timer = setTimeout(onTimeUp, ms);
  timer.unref();
  return { clear: () => clearTimeout(timer) };
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** ISO 8601 UTC text: the single representation of time in storage and in the API. */
export function iso(d: Date | number): string {
  return new Date(d).toISOString();
}
