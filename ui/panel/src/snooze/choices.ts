// The Snooze menu's quick choices, in the member's own time zone (the browser's, or `timeZone` when
// given: tests and people working in another zone). Pure: `now` comes in, times go out.

export interface SnoozeChoice {
  key: 'later_today' | 'tomorrow' | 'next_monday';
  at: Date;
}

/** The wall-clock parts of an instant in a zone. */
function partsIn(at: Date, timeZone: string | undefined) {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    weekday: 'short',
  });
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(p.weekday);
  return { year: Number(p.year), month: Number(p.month), day: Number(p.day), hour: Number(p.hour), minute: Number(p.minute), weekday };
}

/**
 * The instant when the zone's clock shows this date and time. A time the zone skips (a DST gap)
 * moves forward by the gap, as clocks do.
 */
export function zonedTime(date: { year: number; month: number; day: number }, hour: number, minute: number, timeZone?: string): Date {
  const wall = Date.UTC(date.year, date.month - 1, date.day, hour, minute);
  const offset = (t: number) => {
    const p = partsIn(new Date(t), timeZone);
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - Math.floor(t / 60_000) * 60_000;
  };
  const first = wall - offset(wall);
  if (first + offset(first) === wall) return new Date(first);
  const second = wall - offset(first);
  if (second + offset(second) === wall) return new Date(second);
  return new Date(Math.max(first, second));
}

function addDays(d: { year: number; month: number; day: number }, n: number) {
  const x = new Date(Date.UTC(d.year, d.month - 1, d.day + n));
  return { year: x.getUTCFullYear(), month: x.getUTCMonth() + 1, day: x.getUTCDate() };
}

/** Later today (three hours on, on the hour, while still today before 21:00), tomorrow 09:00, next Monday 09:00. */
export function snoozeChoices(now: Date, timeZone?: string): SnoozeChoice[] {
  const here = partsIn(now, timeZone);
  const out: SnoozeChoice[] = [];
  const laterHour = here.hour + 3 + (here.minute > 0 ? 1 : 0);
  if (laterHour <= 21) out.push({ key: 'later_today', at: zonedTime(here, laterHour, 0, timeZone) });
  out.push({ key: 'tomorrow', at: zonedTime(addDays(here, 1), 9, 0, timeZone) });
  const toMonday = (8 - here.weekday) % 7 || 7;
  out.push({ key: 'next_monday', at: zonedTime(addDays(here, toMonday), 9, 0, timeZone) });
  return out;
}

/** "Mon 09:00" (within a week) or "12 Dec 09:00", in the person's language and zone. */
export function wakeText(iso: string, lang: string, now = Date.now(), timeZone?: string): string {
  const at = Date.parse(iso);
  const soon = at - now < 6 * 86400_000;
  return new Intl.DateTimeFormat(lang, {
    timeZone,
    ...(soon ? { weekday: 'short' } : { day: 'numeric', month: 'short' }),
    hour: '2-digit',
    minute: '2-digit',
  }).format(at);
}

/** The value of a datetime-local input as an instant in the zone. */
export function fromLocalInput(value: string, timeZone?: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!m) return null;
  return zonedTime({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }, Number(m[4]), Number(m[5]), timeZone);
}
