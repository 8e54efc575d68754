// The stats query (GET /v1/analytics/stats, modelled on Plausible's Stats API): metrics over a
// period, optionally broken down by one dimension, with filters. Days the rollup job has summed up
// are read from analytics_rollups; later days (today) and any filtered query from the raw events and
// visits. Visitors add up across days exactly: the salt changes daily, so the same person on two days
// is two visitors by construction (as in Plausible). The reads run on a reader thread on SQLite
// (src/db/readers.ts); the rollup job's, in its transaction, on the main connection.
import { type ExpressionBuilder, sql } from 'kysely';
import { readRows } from '../db/readers.js';
import type { Database, Db } from '../db/schema.js';
import { DAY } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { dayOf } from './visitor.js';

export const METRICS = ['visitors', 'pageviews', 'events', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit'] as const;
export type Metric = (typeof METRICS)[number];
const VISIT_METRICS: ReadonlySet<Metric> = new Set(['visits', 'bounce_rate', 'visit_duration', 'views_per_visit']);

type EventColumn = 'path' | 'name';
type VisitColumn =
  | 'entry_path'
  | 'exit_path'
  | 'source'
  | 'referrer'
  | 'utm_source'
  | 'utm_medium'
  | 'utm_campaign'
  | 'country'
  | 'region'
  | 'city'
  | 'browser'
  | 'os'
  | 'device';
type DimensionSpec = { table: 'events'; column: EventColumn } | { table: 'visits'; column: VisitColumn };

export const DIMENSIONS: Record<string, DimensionSpec> = {
  'event:page': { table: 'events', column: 'path' },
  'event:name': { table: 'events', column: 'name' },
  'visit:entry_page': { table: 'visits', column: 'entry_path' },
  'visit:exit_page': { table: 'visits', column: 'exit_path' },
  'visit:source': { table: 'visits', column: 'source' },
  'visit:referrer': { table: 'visits', column: 'referrer' },
  'visit:utm_source': { table: 'visits', column: 'utm_source' },
  'visit:utm_medium': { table: 'visits', column: 'utm_medium' },
  'visit:utm_campaign': { table: 'visits', column: 'utm_campaign' },
  'visit:country': { table: 'visits', column: 'country' },
  'visit:region': { table: 'visits', column: 'region' },
  'visit:city': { table: 'visits', column: 'city' },
  'visit:browser': { table: 'visits', column: 'browser' },
  'visit:os': { table: 'visits', column: 'os' },
  'visit:device': { table: 'visits', column: 'device' },
};
export const PERIODS = ['day', '7d', '30d', 'month', 'custom'] as const;
export const MAX_CUSTOM_DAYS = 366;

export interface Filter {
  dimension: string;
  negate: boolean;
  values: string[];
}

/** Sums for one day and dimension value ('' value: the day's totals). */
export interface DayRow {
  day: string;
  value: string | null;
  visitors: number;
  pageviews: number;
  events: number;
  visits: number;
  bounces: number;
  duration_s: number;
}

/** `event:page==/a|/b;visit:source!=google.com` → filters (Plausible's v1 syntax). */
export function parseFilters(text: string | undefined): Filter[] {
  if (!text) return [];
  return text.split(';').map((part) => {
    const m = /^([a-z_:]+)(==|!=)(.+)$/.exec(part.trim());
    if (!m || !DIMENSIONS[m[1]])
      throw invalid(`bad filter ${JSON.stringify(part)}; expected <dimension>==<value>[|<value>…] or !=, dimensions: ${Object.keys(DIMENSIONS).join(', ')}`);
    const values = m[3]
      .split('|')
      .map((v) => v.trim())
      .filter(Boolean);
    if (!values.length || values.length > 50 || values.some((v) => v.length > 512)) throw invalid(`bad filter values in ${JSON.stringify(part)}`);
    return { dimension: m[1], negate: m[2] === '!=', values };
  });
}

export function parseMetrics(text: string | undefined, dimension: string | undefined): Metric[] {
  const list = (text ?? 'visitors')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  for (const m of list) if (!(METRICS as readonly string[]).includes(m)) throw invalid(`unknown metric ${JSON.stringify(m)}; metrics: ${METRICS.join(', ')}`);
  const metrics = [...new Set(list)] as Metric[];
  if (!metrics.length) throw invalid('name at least one metric');
  const spec = dimension ? DIMENSIONS[dimension] : undefined;
  if (spec?.table === 'events') {
    const bad = metrics.find((m) => VISIT_METRICS.has(m));
    if (bad) throw invalid(`the metric ${bad} is about visits and not available with the dimension ${dimension}`);
  }
  return metrics;
}

/** The period's first and last UTC day (inclusive). */
export function periodRange(period: string, now: Date, opts: { date?: string; from?: string; to?: string }): { from: string; to: string } {
  const anchor = opts.date ? checkDay(opts.date, 'date') : dayOf(now);
  const back = (n: number) => dayOf(Date.parse(`${anchor}T00:00:00Z`) - n * DAY);
  switch (period) {
    case 'day':
      return { from: anchor, to: anchor };
    case '7d':
      return { from: back(6), to: anchor };
    case '30d':
      return { from: back(29), to: anchor };
    case 'month':
      return { from: `${anchor.slice(0, 7)}-01`, to: anchor };
    case 'custom': {
      if (!opts.from || !opts.to) throw invalid('period=custom needs from and to (YYYY-MM-DD)');
      const from = checkDay(opts.from, 'from');
      const to = checkDay(opts.to, 'to');
      if (from > to) throw invalid('from must not be after to');
      if ((Date.parse(to) - Date.parse(from)) / DAY + 1 > MAX_CUSTOM_DAYS) throw invalid(`a custom period is at most ${MAX_CUSTOM_DAYS} days`);
      return { from, to };
    }
    default:
      throw invalid(`period must be one of ${PERIODS.join(', ')}`);
  }
}

function checkDay(text: string, name: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`)) || dayOf(Date.parse(`${text}T00:00:00Z`)) !== text)
    throw invalid(`${name} must be a date, YYYY-MM-DD`);
  return text;
}

export function nextDay(day: string, n = 1): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + n * DAY);
}

type EB<T extends keyof Database> = ExpressionBuilder<Database, T>;

function eventFilters(eb: EB<'analytics_events'>, propertyId: string, from: string, to: string, filters: Filter[]) {
  return eb.and(
    filters.map((f) => {
      const spec = DIMENSIONS[f.dimension];
      if (spec.table === 'events') return eb(`analytics_events.${spec.column}`, f.negate ? 'not in' : 'in', f.values);
      const visits = eb
        .selectFrom('analytics_visits as fv')
        .select('fv.id')
        .where('fv.property_id', '=', propertyId)
        .where('fv.day', '>=', dayOf(Date.parse(`${from}T00:00:00Z`) - DAY))
        .where('fv.day', '<=', to)
        .where(`fv.${spec.column}`, 'in', f.values);
      return eb('analytics_events.visit_id', f.negate ? 'not in' : 'in', visits);
    }),
  );
}

function visitFilters(eb: EB<'analytics_visits'>, propertyId: string, from: string, to: string, filters: Filter[]) {
  return eb.and(
    filters.map((f) => {
      const spec = DIMENSIONS[f.dimension];
      if (spec.table === 'visits') return eb(`analytics_visits.${spec.column}`, f.negate ? 'not in' : 'in', f.values);
      const events = eb
        .selectFrom('analytics_events as fe')
        .select('fe.visit_id')
        .where('fe.property_id', '=', propertyId)
        .where('fe.day', '>=', from)
        .where('fe.day', '<=', nextDay(to))
        .where('fe.visit_id', 'is not', null)
        .where(`fe.${spec.column}`, 'in', f.values);
      return eb('analytics_visits.id', f.negate ? 'not in' : 'in', events);
    }),
  );
}

const n = (v: unknown) => Number(v ?? 0);

/** Per-day sums from the raw events and visits (within SVC_ANALYTICS_RAW_DAYS). */
export async function rawRows(db: Db, propertyId: string, from: string, to: string, dimension: string | null, filters: Filter[]): Promise<DayRow[]> {
  const spec = dimension ? DIMENSIONS[dimension] : undefined;
  const eventsQuery = () =>
    db
      .selectFrom('analytics_events')
      .where('property_id', '=', propertyId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .where((eb) => eventFilters(eb, propertyId, from, to, filters));
  const visitsQuery = () =>
    db
      .selectFrom('analytics_visits')
      .where('property_id', '=', propertyId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .where((eb) => visitFilters(eb, propertyId, from, to, filters));
  const eventSums = [
    sql<number>`count(distinct visitor_id)`.as('visitors'),
    sql<number>`sum(case when name = 'pageview' then 1 else 0 end)`.as('pageviews'),
    sql<number>`count(*)`.as('events'),
  ];
  const visitSums = [
    sql<number>`count(*)`.as('visits'),
    sql<number>`sum(case when events <= 1 then 1 else 0 end)`.as('bounces'),
    sql<number>`sum(duration_s)`.as('duration_s'),
  ];
  if (!spec) {
    const ev = await readRows(
      db,
      eventsQuery()
        .select(['day', ...eventSums])
        .groupBy('day'),
    );
    const vi = await rawVisitSums(db, propertyId, from, to, filters);
    const byDay = new Map<string, DayRow>();
    const row = (day: string) => {
      let r = byDay.get(day);
      if (!r) byDay.set(day, (r = { day, value: null, visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 }));
      return r;
    };
    for (const e of ev) Object.assign(row(e.day), { visitors: n(e.visitors), pageviews: n(e.pageviews), events: n(e.events) });
    for (const v of vi) Object.assign(row(v.day), { visits: v.visits, bounces: v.bounces, duration_s: v.duration_s });
    return [...byDay.values()];
  }
  if (spec.table === 'events') {
    const rows = await readRows(
      db,
      eventsQuery()
        .select(['day', sql<string | null>`${sql.ref(spec.column)}`.as('value'), ...eventSums])
        .groupBy(['day', spec.column]),
    );
    return rows.map((r) => ({
      day: r.day,
      value: r.value,
      visitors: n(r.visitors),
      pageviews: n(r.pageviews),
      events: n(r.events),
      visits: 0,
      bounces: 0,
      duration_s: 0,
    }));
  }
  const rows = await readRows(
    db,
    visitsQuery()
      .select([
        'day',
        sql<string | null>`${sql.ref(spec.column)}`.as('value'),
        sql<number>`count(distinct visitor_id)`.as('visitors'),
        sql<number>`sum(pageviews)`.as('pageviews'),
        sql<number>`sum(events)`.as('events'),
        ...visitSums,
      ])
      .groupBy(['day', spec.column]),
  );
  return rows.map((r) => ({
    day: r.day,
    value: r.value,
    visitors: n(r.visitors),
    pageviews: n(r.pageviews),
    events: n(r.events),
    visits: n(r.visits),
    bounces: n(r.bounces),
    duration_s: n(r.duration_s),
  }));
}

/** Per-day visits, bounces and visit seconds from the raw visits. */
export async function rawVisitSums(db: Db, propertyId: string, from: string, to: string, filters: Filter[]) {
  const rows = await readRows(
    db,
    db
      .selectFrom('analytics_visits')
      .select([
        'day',
        sql<number>`count(*)`.as('visits'),
        sql<number>`sum(case when events <= 1 then 1 else 0 end)`.as('bounces'),
        sql<number>`sum(duration_s)`.as('duration_s'),
      ])
      .where('property_id', '=', propertyId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .where((eb) => visitFilters(eb, propertyId, from, to, filters))
      .groupBy('day'),
  );
  return rows.map((r) => ({ day: r.day, visits: n(r.visits), bounces: n(r.bounces), duration_s: n(r.duration_s) }));
}

export async function rollupRows(db: Db, propertyId: string, from: string, to: string, dimension: string | null): Promise<DayRow[]> {
  const rows = await readRows(
    db,
    db
      .selectFrom('analytics_rollups')
      .select(['day', 'value', 'visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'])
      .where('property_id', '=', propertyId)
      .where('day', '>=', from)
      .where('day', '<=', to)
      .where('dimension', '=', dimension ?? ''),
  );
  return rows.map((r) => ({
    day: r.day,
    value: dimension ? r.value || null : null,
    visitors: n(r.visitors),
    pageviews: n(r.pageviews),
    events: n(r.events),
    visits: n(r.visits),
    bounces: n(r.bounces),
    duration_s: n(r.duration_s),
  }));
}

type Sums = Omit<DayRow, 'day' | 'value'>;
const zero = (): Sums => ({ visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 });
function add(into: Sums, r: Sums): Sums {
  into.visitors += r.visitors;
  into.pageviews += r.pageviews;
  into.events += r.events;
  into.visits += r.visits;
  into.bounces += r.bounces;
  into.duration_s += r.duration_s;
  return into;
}

export function metricValue(m: Metric, s: Sums): number {
  switch (m) {
    case 'visitors':
      return s.visitors;
    case 'pageviews':
      return s.pageviews;
    case 'events':
      return s.events;
    case 'visits':
      return s.visits;
    case 'bounce_rate':
      return s.visits ? Math.round((s.bounces * 100) / s.visits) : 0;
    case 'visit_duration':
      return s.visits ? Math.round(s.duration_s / s.visits) : 0;
    case 'views_per_visit':
      return s.visits ? Math.round((s.pageviews * 100) / s.visits) / 100 : 0;
  }
}

export function sumRows(rows: DayRow[]): Sums {
  return rows.reduce((acc, r) => add(acc, r), zero());
}

export function byValue(rows: DayRow[]): Map<string | null, Sums> {
  const out = new Map<string | null, Sums>();
  for (const r of rows) {
    let s = out.get(r.value);
    if (!s) out.set(r.value, (s = zero()));
    add(s, r);
  }
  return out;
}

export function byDay(rows: DayRow[]): Map<string, Sums> {
  const out = new Map<string, Sums>();
  for (const r of rows) {
    let s = out.get(r.day);
    if (!s) out.set(r.day, (s = zero()));
    add(s, r);
  }
  return out;
}
