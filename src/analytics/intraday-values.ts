// Today's breakdowns by the dimensions the dashboard shows first (issue 39): the writer keeps, in
// each batch's transaction, per property, day, dimension and value how many events (event
// dimensions: pages, event names) or visits (visit dimensions: entry and exit pages, sources,
// countries, devices, browsers, operating systems) each visitor has, and per value the visitors and
// events and pageviews (event dimensions) or the visits and their sums (visit dimensions: visits,
// bounces, seconds, and the visits' pageviews and events, in the same columns: a row is of one kind).
// A value's visitors change when a visitor's count goes from 0 to more (or back, when a visit's
// exit page moves on): the upsert returns the count after the batch's change, and the unique key
// serialises concurrent writers (also across processes), so the kept figures equal counting
// distinct visitors over the raw rows. A visit that goes on moves its values' sums by the
// difference between its row before and after the batch (the writer holds the row locked on
// Postgres). Other dimensions and filtered queries still come from the raw rows (stats.ts). The
// rollup job deletes a day's rows here once it has summed the day up (intraday.ts).
import { sql } from 'kysely';
import { readRows } from '../db/readers.js';
import type { AnalyticsDayValuesTable, AnalyticsDayValueVisitorsTable, AnalyticsEventsTable, AnalyticsVisitsTable, Db } from '../db/schema.js';
import { insertRows } from './bulk.js';
import type { DayRow } from './stats.js';

const EVENT_KEPT = [
  ['event:page', 'path'],
  ['event:name', 'name'],
] as const;
const VISIT_KEPT = [
  ['visit:entry_page', 'entry_path'],
  ['visit:exit_page', 'exit_path'],
  ['visit:source', 'source'],
  ['visit:country', 'country'],
  ['visit:device', 'device'],
  ['visit:browser', 'browser'],
  ['visit:os', 'os'],
] as const;

/** Dimensions whose figures for the days not yet rolled up are kept by the writer. */
export const KEPT_DIMENSIONS: ReadonlySet<string> = new Set([...EVENT_KEPT, ...VISIT_KEPT].map(([d]) => d));

type EventLike = Pick<AnalyticsEventsTable, 'property_id' | 'workspace_id' | 'day' | 'name' | 'visitor_id' | 'path'>;
export type VisitLike = Pick<
  AnalyticsVisitsTable,
  | 'property_id'
  | 'workspace_id'
  | 'day'
  | 'visitor_id'
  | 'entry_path'
  | 'exit_path'
  | 'source'
  | 'country'
  | 'device'
  | 'browser'
  | 'os'
  | 'pageviews'
  | 'events'
  | 'duration_s'
>;
/** A visit the batch moved on: its row before the batch and after. */
export interface MovedVisit {
  before: VisitLike;
  after: VisitLike;
}

/** What one visit adds to the sums of its day and of each of its values (sign -1: takes away). */
export interface VisitSums {
  visits: number;
  bounces: number;
  duration_s: number;
  pageviews: number;
  events: number;
}
export const visitSums = (v: VisitLike, sign: 1 | -1 = 1): VisitSums => ({
  visits: sign,
  bounces: v.events <= 1 ? sign : 0, // as stats.ts counts bounces from the raw visits
  duration_s: sign * v.duration_s,
  pageviews: sign * v.pageviews,
  events: sign * v.events,
});
function addSums(into: VisitSums, d: VisitSums): void {
  into.visits += d.visits;
  into.bounces += d.bounces;
  into.duration_s += d.duration_s;
  into.pageviews += d.pageviews;
  into.events += d.events;
}

/** A batch's change to a value's kept figures (added to the row by the upsert). */
type ValueDelta = AnalyticsDayValuesTable;

/** A batch's change to one visitor's count with a value. */
type VisitorDelta = AnalyticsDayValueVisitorsTable;

const keyOf = (r: { property_id: string; day: string; dimension: string; value: string }) => `${r.property_id}\0${r.day}\0${r.dimension}\0${r.value}`;

/**
 * Adds a batch to the kept figures (inside the batch's transaction): its events, the visits it
 * started (as they are after the batch) and the visits it moved on (the difference).
 */
export async function recordDayValues(trx: Db, events: readonly EventLike[], started: readonly VisitLike[], moved: readonly MovedVisit[]): Promise<void> {
  const values = new Map<string, ValueDelta>();
  const visitors = new Map<string, VisitorDelta & { workspace_id: string }>();
  const value = (property_id: string, day: string, dimension: string, v: string, workspace_id: string) => {
    const key = `${property_id}\0${day}\0${dimension}\0${v}`;
    let r = values.get(key);
    if (!r)
      values.set(
        key,
        (r = { property_id, day, dimension, value: v, workspace_id, visitors: 0, visits: 0, pageviews: 0, events: 0, bounces: 0, duration_s: 0 }),
      );
    return r;
  };
  const visitor = (r: ValueDelta, visitor_id: string, n: number) => {
    const key = `${keyOf(r)}\0${visitor_id}`;
    const d = visitors.get(key);
    if (d) d.n += n;
    else visitors.set(key, { property_id: r.property_id, day: r.day, dimension: r.dimension, value: r.value, visitor_id, n, workspace_id: r.workspace_id });
  };
  for (const e of events) {
    for (const [dimension, column] of EVENT_KEPT) {
      const r = value(e.property_id, e.day, dimension, e[column] ?? '', e.workspace_id);
      r.events++;
      if (e.name === 'pageview') r.pageviews++;
      if (e.visitor_id) visitor(r, e.visitor_id, 1);
    }
  }
  for (const v of started) {
    const sums = visitSums(v);
    for (const [dimension, column] of VISIT_KEPT) {
      const r = value(v.property_id, v.day, dimension, v[column] ?? '', v.workspace_id);
      addSums(r, sums);
      visitor(r, v.visitor_id, 1);
    }
  }
  for (const { before, after: v } of moved) {
    const gone = visitSums(before, -1);
    const now = visitSums(v);
    const diff = { ...now };
    addSums(diff, gone);
    for (const [dimension, column] of VISIT_KEPT) {
      const was = before[column] ?? '';
      const is = v[column] ?? '';
      if (was === is) {
        addSums(value(v.property_id, v.day, dimension, is, v.workspace_id), diff);
        continue;
      }
      // The exit page moved on: the visit leaves its old value and joins its new one.
      const from = value(v.property_id, v.day, dimension, was, v.workspace_id);
      addSums(from, gone);
      visitor(from, v.visitor_id, -1);
      const to = value(v.property_id, v.day, dimension, is, v.workspace_id);
      addSums(to, now);
      visitor(to, v.visitor_id, 1);
    }
  }

  // In key order, as every writer does: concurrent batches wait on each other instead of deadlocking.
  const counts = [...visitors.keys()]
    .sort()
    .map((k) => visitors.get(k)!)
    .filter((d) => d.n !== 0);
  const after = await insertRows<Omit<VisitorDelta, 'workspace_id'>, VisitorDelta>(
    trx,
    'analytics_day_value_visitors',
    counts.map(({ workspace_id: _, ...d }) => d),
    { property_id: 'text', day: 'text', dimension: 'text', value: 'text', visitor_id: 'text', n: 'integer' },
    sql`on conflict (property_id, day, dimension, value, visitor_id) do update set n = analytics_day_value_visitors.n + excluded.n
      returning property_id, day, dimension, value, visitor_id, n`,
  );
  for (const r of after) {
    const d = visitors.get(`${keyOf(r)}\0${r.visitor_id}`)!;
    const now = Number(r.n);
    const before = now - d.n;
    const change = before <= 0 && now > 0 ? 1 : before > 0 && now <= 0 ? -1 : 0;
    if (change) value(d.property_id, d.day, d.dimension, d.value, d.workspace_id).visitors += change;
  }
  const rows = [...values.keys()]
    .sort()
    .map((k) => values.get(k)!)
    .filter((r) => r.visitors || r.visits || r.pageviews || r.events || r.bounces || r.duration_s);
  const int = 'integer' as const;
  await insertRows(
    trx,
    'analytics_day_values',
    rows,
    {
      property_id: 'text',
      day: 'text',
      dimension: 'text',
      value: 'text',
      workspace_id: 'text',
      visitors: int,
      visits: int,
      pageviews: int,
      events: int,
      bounces: int,
      duration_s: int,
    },
    sql`on conflict (property_id, day, dimension, value) do update set visitors = analytics_day_values.visitors + excluded.visitors,
      visits = analytics_day_values.visits + excluded.visits, pageviews = analytics_day_values.pageviews + excluded.pageviews,
      events = analytics_day_values.events + excluded.events, bounces = analytics_day_values.bounces + excluded.bounces,
      duration_s = analytics_day_values.duration_s + excluded.duration_s`,
  );
}

/** Per-day figures by a kept dimension for [from, to] (days after rolled_through), as kept by the writer. */
export async function dayValueRows(db: Db, propertyId: string, from: string, to: string, dimension: string): Promise<DayRow[]> {
  const kept = await readRows(
    db,
    db
      .selectFrom('analytics_day_values')
      .select(['day', 'value', 'visitors', 'visits', 'pageviews', 'events', 'bounces', 'duration_s'])
      .where('property_id', '=', propertyId)
      .where('dimension', '=', dimension)
      .where('day', '>=', from)
      .where('day', '<=', to),
  );
  const rows: DayRow[] = [];
  for (const r of kept) {
    if (!Number(r.visitors) && !Number(r.visits) && !Number(r.events)) continue; // an exit page no visit ends on any more
    rows.push({
      day: r.day,
      value: r.value || null,
      visitors: Number(r.visitors),
      visits: Number(r.visits),
      pageviews: Number(r.pageviews),
      events: Number(r.events),
      bounces: Number(r.bounces),
      duration_s: Number(r.duration_s),
    });
  }
  return rows;
}
