// Medians and p90s of first response and resolution times, computed by the database: a year of a
// busy workspace has ~260,000 duration rows (bench/panel-api), which cost most of a report's time
// when they were read into the process and sorted there. The figures stay exact: the median is the
// mean of the two middle values (rounded), p90 the nearest rank (the value at ceil(0.9·n)), the same
// as durationFigures in service.ts computes from sorted values.
//
// Postgres: percentile_cont(0.5) is that median, percentile_disc(0.9) that nearest rank (per day,
// and over a short period).
// SQLite (its percentile functions, built into better-sqlite3): median() is that median, but
// percentile_disc(x, 0.9) picks the value at floor(0.9·(n−1)) (0-based), which is the nearest rank
// only when n is a multiple of 10; otherwise the nearest rank is the value at ceil(0.9·n − 0.9),
// which −percentile_disc(−x, 0.1) picks (floor(0.1·(n−1)) from the top). The double 0.1 is a little
// above 1/10, so 0.1·(n−1) never rounds below a whole number it should equal. Days compute both and
// keep the right one. A long period's figures, on both, are the values at those ranks, read with an
// offset from the value indexes.
import { type SelectQueryBuilder, sql } from 'kysely';
import { readRows } from '../db/readers.js';
import type { Database, Db } from '../db/schema.js';

export const DURATION_KEYS = ['first_response', 'resolution', 'first_response_business', 'resolution_business'] as const;
export type DurationKey = (typeof DURATION_KEYS)[number];
export type DurationFigure = { count: number; median_seconds: number | null; p90_seconds: number | null };
export type DurationFigures = Record<DurationKey, DurationFigure>;

const KINDS = ['first_response', 'resolution'] as const;
/** From this many days on, the period's figures are read by rank from the (kind, value) indexes. */
export const LONG_PERIOD_DAYS = 120;
const none = (): DurationFigure => ({ count: 0, median_seconds: null, p90_seconds: null });
export const noDurations = (): DurationFigures => ({
  first_response: none(),
  resolution: none(),
  first_response_business: none(),
  resolution_business: none(),
});

// Rows from before business hours were counted (0046) have no business_seconds: calendar time.
const business = sql<number>`coalesce(business_seconds, seconds)`;

type Scoped = SelectQueryBuilder<Database, 'report_durations', {}>;

interface Row {
  day: string | null;
  kind: (typeof KINDS)[number];
  n: number;
  m: number;
  p: number;
  bm: number;
  bp: number;
}

function put(target: DurationFigures, r: Row): void {
  const n = Number(r.n);
  target[r.kind] = { count: n, median_seconds: Math.round(Number(r.m)), p90_seconds: Number(r.p) };
  target[`${r.kind}_business`] = { count: n, median_seconds: Math.round(Number(r.bm)), p90_seconds: Number(r.bp) };
}

/**
 * The figures of each day of `days` and of the whole period, over the duration rows `scoped()`
 * selects (see service.ts for dayIndexed). Days in `keptFigures` (./day-figures.ts) are not computed again.
 * The reads run on a reader thread of `db` when it has one (src/db/readers.ts).
 */
export async function periodDurations(
  db: Db,
  scoped: (dayIndexed?: boolean) => Scoped,
  postgres: boolean,
  days: string[],
  keptFigures: ReadonlyMap<string, DurationFigures> = new Map(),
): Promise<{ perDay: Map<string, DurationFigures>; period: DurationFigures }> {
  const perDay = new Map(days.map((day) => [day, keptFigures.get(day) ?? noDurations()]));
  const period = noDurations();
  const missing = days.filter((day) => !keptFigures.has(day));
  // Only the days not kept: from the first to the last of them.
  const missingScoped = () =>
    missing.length < days.length
      ? scoped()
          .where('day', '>=', missing[0])
          .where('day', '<=', missing[missing.length - 1])
      : scoped();
  const percentiles = [
    sql<number>`count(*)`.as('n'),
    sql<number>`percentile_cont(0.5) within group (order by seconds)`.as('m'),
    sql<number>`percentile_disc(0.9) within group (order by seconds)`.as('p'),
    sql<number>`percentile_cont(0.5) within group (order by ${business})`.as('bm'),
    sql<number>`percentile_disc(0.9) within group (order by ${business})`.as('bp'),
  ] as const;
  if (missing.length && postgres) {
    const rows = await readRows(
      db,
      missingScoped()
        .select(['day', 'kind', ...percentiles])
        .groupBy(['day', 'kind']),
    );
    for (const r of rows as Row[]) if (!keptFigures.has(r.day!)) put(perDay.get(r.day!)!, r);
  } else if (missing.length) {
    const rows = await readRows(
      db,
      missingScoped()
        .select([
          'day',
          'kind',
          sql<number>`count(*)`.as('n'),
          sql<number>`median(seconds)`.as('m'),
          sql<number>`percentile_disc(seconds, 0.9)`.as('p_low'),
          sql<number>`-percentile_disc(-seconds, 0.1)`.as('p_high'),
          sql<number>`median(${business})`.as('bm'),
          sql<number>`percentile_disc(${business}, 0.9)`.as('bp_low'),
          sql<number>`-percentile_disc(-${business}, 0.1)`.as('bp_high'),
        ])
        .groupBy(['day', 'kind']),
    );
    for (const r of rows) {
      if (keptFigures.has(r.day)) continue;
      const low = Number(r.n) % 10 === 0;
      put(perDay.get(r.day)!, { ...r, p: low ? r.p_low : r.p_high, bp: low ? r.bp_low : r.bp_high });
    }
  }
  const counts = { first_response: 0, resolution: 0 };
  for (const figures of perDay.values()) for (const kind of KINDS) counts[kind] += figures[kind].count;
  // The period's figures. A long period: the values at the ranks wanted, read in order from the
  // indexes of 0065 (0072 on Postgres: workspace, kind, value, day, …), a walk of about half the
  // kind's entries (p90 from the top end) and no sort. A short one: that walk would pass over every other day's entries, so the period's rows
  // are aggregated through the day index instead (one sort per figure, of the period's values).
  if (days.length < LONG_PERIOD_DAYS && postgres) {
    const rows = await readRows(
      db,
      scoped()
        .select([sql<null>`null`.as('day'), 'kind', ...percentiles])
        .groupBy('kind'),
    );
    for (const r of rows as Row[]) put(period, r);
    return { perDay, period };
  }
  if (days.length < LONG_PERIOD_DAYS) {
    for (const kind of KINDS) {
      const n = counts[kind];
      if (!n) continue;
      // −1: the value at floor(0.1·(n−1)) from the top (see above).
      const sign = n % 10 === 0 ? 1 : -1;
      const fraction = sign === 1 ? 0.9 : 0.1;
      const [r] = await readRows(
        db,
        scoped()
          .where('kind', '=', kind)
          .select([
            sql<number>`median(seconds)`.as('m'),
            sql<number>`${sign} * percentile_disc(${sign} * seconds, ${fraction})`.as('p'),
            sql<number>`median(${business})`.as('bm'),
            sql<number>`${sign} * percentile_disc(${sign} * ${business}, ${fraction})`.as('bp'),
          ]),
      );
      put(period, { ...r, n, day: null, kind });
    }
    return { perDay, period };
  }
  for (const kind of KINDS) {
    const n = counts[kind];
    if (!n) continue;
    // The rank's value, walking the index from the nearer end (p90 from the top: a tenth of the walk).
    const nth = async (value: typeof business | ReturnType<typeof sql.ref>, offset: number, count: number) => {
      const fromTop = offset > n / 2;
      const rows = await readRows(
        db,
        scoped(false)
          .where('kind', '=', kind)
          .select(sql<number>`${value}`.as('v'))
          .orderBy(sql`${value}`, fromTop ? 'desc' : 'asc')
          .limit(count)
          .offset(fromTop ? n - offset - count : offset),
      );
      return rows.map((r) => Number(r.v)).sort((a, b) => a - b);
    };
    const figure = async (value: typeof business | ReturnType<typeof sql.ref>): Promise<DurationFigure> => {
      const middle = await nth(value, n % 2 ? (n - 1) / 2 : n / 2 - 1, n % 2 ? 1 : 2);
      const [p90] = await nth(value, Math.ceil(0.9 * n) - 1, 1);
      return { count: n, median_seconds: middle.length === 1 ? middle[0] : Math.round((middle[0] + middle[1]) / 2), p90_seconds: p90 };
    };
    period[kind] = await figure(sql.ref('seconds'));
    period[`${kind}_business`] = await figure(business);
  }
  return { perDay, period };
}
