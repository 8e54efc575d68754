// Business hours per inbox (issue 35): the stored schedule, its validation (each problem named by
// its field), and the inbox's hours as the arithmetic (./schedule.ts) takes them.
import type { Ctx } from '../context.js';
import type { Db } from '../db/schema.js';
import type { InboxRow } from '../inboxes/store.js';
import { iso } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { type BusinessHours, type Interval, isKnownZone, isOpen, minutesOf, nextOpening, WEEKDAYS, type Weekday } from './schedule.js';

export const MAX_INTERVALS_PER_DAY = 8;
export const MAX_EXCEPTIONS = 400;

export interface HoursInput {
  weekly: Partial<Record<Weekday, Interval[]>> | null;
  exceptions: { date: string; intervals: Interval[] }[];
}

type Issue = { path: string; message: string };

function checkIntervals(intervals: Interval[], path: string, issues: Issue[]): Interval[] {
  if (intervals.length > MAX_INTERVALS_PER_DAY) issues.push({ path, message: `at most ${MAX_INTERVALS_PER_DAY} intervals a day` });
  const spans = intervals.map((i, n) => {
    const start = minutesOf(i.start);
    const end = minutesOf(i.end);
    if (Number.isNaN(start) || start >= 24 * 60) issues.push({ path: `${path}.${n}.start`, message: 'a time HH:MM from 00:00 to 23:59' });
    if (Number.isNaN(end)) issues.push({ path: `${path}.${n}.end`, message: 'a time HH:MM from 00:01 to 24:00' });
    else if (!Number.isNaN(start) && end <= start) issues.push({ path: `${path}.${n}.end`, message: 'must be after start' });
    return { start, end, n };
  });
  const sorted = spans.filter((s) => !Number.isNaN(s.start) && !Number.isNaN(s.end) && s.end > s.start).sort((a, b) => a.start - b.start);
  for (let k = 1; k < sorted.length; k++) {
    if (sorted[k].start < sorted[k - 1].end)
      issues.push({ path: `${path}.${sorted[k].n}`, message: `overlaps ${intervals[sorted[k - 1].n].start}–${intervals[sorted[k - 1].n].end}` });
  }
  return sorted.map((s) => intervals[s.n]).map((i) => ({ start: i.start, end: i.end }));
}

function isCalendarDate(date: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** The schedule as stored (intervals sorted, exceptions by date), or 400 with every problem's field. */
export function checkHours(input: HoursInput): HoursInput {
  const issues: Issue[] = [];
  let weekly: HoursInput['weekly'] = null;
  if (input.weekly) {
    weekly = {};
    for (const [day, intervals] of Object.entries(input.weekly)) {
      if (!WEEKDAYS.includes(day as Weekday)) {
        issues.push({ path: `weekly.${day}`, message: `a weekday: ${WEEKDAYS.join(', ')}` });
        continue;
      }
      const checked = checkIntervals(intervals ?? [], `weekly.${day}`, issues);
      if (checked.length) weekly[day as Weekday] = checked;
    }
  }
  if (input.exceptions.length > MAX_EXCEPTIONS) issues.push({ path: 'exceptions', message: `at most ${MAX_EXCEPTIONS} exceptions` });
  const seen = new Set<string>();
  const exceptions = input.exceptions.map((e, n) => {
    if (!isCalendarDate(e.date)) issues.push({ path: `exceptions.${n}.date`, message: 'a date YYYY-MM-DD' });
    else if (seen.has(e.date)) issues.push({ path: `exceptions.${n}.date`, message: `${e.date} is given twice` });
    seen.add(e.date);
    return { date: e.date, intervals: checkIntervals(e.intervals, `exceptions.${n}.intervals`, issues) };
  });
  if (issues.length) throw invalid(`${issues[0].path}: ${issues[0].message}`, { issues });
  return { weekly, exceptions: exceptions.sort((a, b) => a.date.localeCompare(b.date)) };
}

/** The inbox's hours for the arithmetic: no row (or no weekly schedule) is always open. */
export async function inboxHours(db: Db, inbox: Pick<InboxRow, 'id' | 'timezone'>): Promise<BusinessHours> {
  const row = await db.selectFrom('inbox_hours').selectAll().where('inbox_id', '=', inbox.id).executeTakeFirst();
  const timezone = isKnownZone(inbox.timezone) ? inbox.timezone : 'UTC';
  if (!row) return { timezone, weekly: null, exceptions: [] };
  return { timezone, weekly: row.weekly ? JSON.parse(row.weekly) : null, exceptions: JSON.parse(row.exceptions) };
}

export function formatHours(inbox: Pick<InboxRow, 'id' | 'timezone'>, hours: BusinessHours, updatedAt: string | null, now: Date) {
  const next = nextOpening(hours, now);
  return {
    inbox_id: inbox.id,
    timezone: hours.timezone,
    weekly: hours.weekly,
    exceptions: hours.exceptions,
    open_now: isOpen(hours, now),
    next_opening: next ? iso(next) : null,
    updated_at: updatedAt,
  };
}

export async function getHours(ctx: Pick<Ctx, 'db' | 'clock'>, inbox: InboxRow) {
  const row = await ctx.db.selectFrom('inbox_hours').select('updated_at').where('inbox_id', '=', inbox.id).executeTakeFirst();
  return formatHours(inbox, await inboxHours(ctx.db, inbox), row?.updated_at ?? null, ctx.clock.now());
}

/** Replaces the inbox's schedule and exceptions (validated first: a refused one changes nothing). */
export async function setHours(ctx: Pick<Ctx, 'db' | 'clock'>, inbox: InboxRow, input: HoursInput) {
  const hours = checkHours(input);
  const now = iso(ctx.clock.now());
  const row = {
    inbox_id: inbox.id,
    workspace_id: inbox.workspace_id,
    weekly: hours.weekly ? JSON.stringify(hours.weekly) : null,
    exceptions: JSON.stringify(hours.exceptions),
    updated_at: now,
  };
  await ctx.db
    .insertInto('inbox_hours')
    .values(row)
    .onConflict((oc) => oc.column('inbox_id').doUpdateSet({ weekly: row.weekly, exceptions: row.exceptions, updated_at: now }))
    .execute();
  return getHours(ctx, inbox);
}
