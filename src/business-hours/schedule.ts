// Business-hours arithmetic (issue 35), pure: a weekly schedule of intervals on the inbox's wall
// clock, dated exceptions that replace a day's intervals (an empty list closes the day), and the
// inbox's time zone. Instants in, instants out; "now" is always an argument (the clock module's).
// Wall-clock times become instants day by day, so DST changes are the zone's business: a day of 23
// or 25 hours has its intervals where its clocks show them, and a time the zone skips (02:30 on the
// spring-forward night) moves forward by the gap, as clocks do.

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** "HH:MM" from 00:00 to 24:00 (24:00 only as an end). */
export interface Interval {
  start: string;
  end: string;
}

export interface BusinessHours {
  timezone: string;
  /** Per weekday; a day without intervals is closed. null: no schedule, always open. */
  weekly: Partial<Record<Weekday, Interval[]>> | null;
  /** A date (YYYY-MM-DD, the zone's calendar) whose intervals replace the weekday's. */
  exceptions: { date: string; intervals: Interval[] }[];
}

type Day = { year: number; month: number; day: number };

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether the zone is one this runtime knows (IANA names, e.g. Europe/Istanbul). */
export function isKnownZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of an instant in a zone. */
export function wallClock(at: Date, timeZone: string) {
  const p: Record<string, number> = {};
  for (const x of formatterFor(timeZone).formatToParts(at)) if (x.type !== 'literal') p[x.type] = Number(x.value);
  return { year: p.year, month: p.month, day: p.day, hour: p.hour, minute: p.minute, second: p.second };
}

/** The instant the zone's clocks show this date and time (a skipped time moves forward by the gap). */
export function zonedInstant(day: Day, minutes: number, timeZone: string): Date {
  const wall = Date.UTC(day.year, day.month - 1, day.day) + minutes * 60_000;
  const offset = (t: number) => {
    const p = wallClock(new Date(t), timeZone);
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - t;
  };
  const first = wall - offset(wall);
  if (first + offset(first) === wall) return new Date(first);
  const second = wall - offset(first);
  if (second + offset(second) === wall) return new Date(second);
  // A time the zone skips: the later candidate is the time moved forward by the gap.
  return new Date(Math.max(first, second));
}

export function minutesOf(hhmm: string): number {
  const m = /^(\d{2}):(\d{2})$/.exec(hhmm);
  if (!m) return Number.NaN;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (min > 59 || h > 24 || (h === 24 && min !== 0)) return Number.NaN;
  return h * 60 + min;
}

function dayKey(d: Day): string {
  return `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
}

function addDays(d: Day, n: number): Day {
  const x = new Date(Date.UTC(d.year, d.month - 1, d.day + n));
  return { year: x.getUTCFullYear(), month: x.getUTCMonth() + 1, day: x.getUTCDate() };
}

/** A day's open spans as instants, in order. */
function spansOf(hours: BusinessHours, d: Day): [number, number][] {
  const exception = hours.exceptions.find((e) => e.date === dayKey(d));
  const weekday = WEEKDAYS[new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay()];
  const intervals = exception ? exception.intervals : (hours.weekly?.[weekday] ?? []);
  return intervals
    .map(
      (i) => [zonedInstant(d, minutesOf(i.start), hours.timezone).getTime(), zonedInstant(d, minutesOf(i.end), hours.timezone).getTime()] as [number, number],
    )
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
}

/** How far the search for an opening looks ahead (a year of closed days means never). */
const HORIZON_DAYS = 370;

/** Open spans overlapping [from, …), day by day, starting the day before (a span may run past midnight's DST shift). */
function* spansFrom(hours: BusinessHours, from: Date): Generator<[number, number]> {
  let d = addDays(wallClock(from, hours.timezone), -1);
  for (let i = 0; i < HORIZON_DAYS; i++, d = addDays(d, 1)) {
    for (const [a, b] of spansOf(hours, d)) if (b > from.getTime()) yield [Math.max(a, from.getTime()), b];
  }
}

export function isOpen(hours: BusinessHours, at: Date): boolean {
  if (!hours.weekly) return true;
  for (const [a] of spansFrom(hours, at)) return a <= at.getTime();
  return false;
}

/** The next moment the inbox is open (at itself when open now); null when no opening within a year. */
export function nextOpening(hours: BusinessHours, at: Date): Date | null {
  if (!hours.weekly) return at;
  for (const [a] of spansFrom(hours, at)) return new Date(a);
  return null;
}

/** The instant after `minutes` of open time counted from `start`; null when the hours never open again. */
export function addBusinessMinutes(hours: BusinessHours, start: Date, minutes: number): Date | null {
  if (!hours.weekly) return new Date(start.getTime() + minutes * 60_000);
  let left = minutes * 60_000;
  for (const [a, b] of spansFrom(hours, start)) {
    if (b - a >= left) return new Date(a + left);
    left -= b - a;
  }
  return null;
}

/** Open time between two instants, in milliseconds (0 when `to` is not after `from`). */
export function businessMsBetween(hours: BusinessHours, from: Date, to: Date): number {
  if (to <= from) return 0;
  if (!hours.weekly) return to.getTime() - from.getTime();
  let total = 0;
  for (const [a, b] of spansFrom(hours, from)) {
    if (a >= to.getTime()) break;
    total += Math.min(b, to.getTime()) - a;
  }
  return total;
}
