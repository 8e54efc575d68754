// Today's breakdowns by the dimensions the dashboard shows first (issue 39): the writer keeps, in
// each batch's transaction, per property, day, dimension and value how many events (event
// dimensions: pages, event names) or visits (visit dimensions: entry and exit pages, sources,
// countries, devices) each visitor has, and per value the visitors, visits, pageviews and events.
// A value's visitors change when a visitor's count goes from 0 to more (or back, when a visit's
// exit page moves on): the upsert returns the count after the batch's change, and the unique key
// serialises concurrent writers (also across processes), so the kept figures equal counting
// distinct visitors over the raw rows. Other dimensions, filtered queries and the visit sums
// (bounces, durations) still come from the raw rows (stats.ts). The rollup job deletes a day's
// rows here once it has summed the day up (intraday.ts).
import { sql } from 'kysely';
import { readRows } from '../db/readers.js';
import type { AnalyticsEventsTable, AnalyticsVisitsTable, Db } from '../db/schema.js';
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
] as const;
const EXIT = 'visit:exit_page';

/** Dimensions whose figures for the days not yet rolled up are kept by the writer. */
export const KEPT_DIMENSIONS: ReadonlySet<string> = new Set([...EVENT_KEPT, ...VISIT_KEPT].map(([d]) => d));

type EventLike = Pick<AnalyticsEventsTable, 'property_id' | 'workspace_id' | 'day' | 'name' | 'visitor_id' | 'path'>;
type VisitLike = Pick<
  AnalyticsVisitsTable,
  'property_id' | 'workspace_id' | 'day' | 'visitor_id' | 'entry_path' | 'exit_path' | 'source' | 'country' | 'device'
>;

interface ValueDelta {
  property_id: string;
  day: string;
  dimension: string;
  value: string;
  workspace_id: string;
  visitors: number;
  visits: number;
  pageviews: number;
  events: number;
}

interface VisitorDelta {
  property_id: string;
  day: string;
  dimension: string;
  value: string;
  visitor_id: string;
  n: number;
}

const keyOf = (r: { property_id: string; day: string; dimension: string; value: string }) => `${r.property_id}\0${r.day}\0${r.dimension}\0${r.value}`;

/**
 * Adds a batch to the kept figures (inside the batch's transaction): its events, the visits it
 * started, and the visits it moved on whose exit page changed (`fromExit`: the exit page before the batch).
 */
export async function recordDayValues(
  trx: Db,
  events: readonly EventLike[],
  started: readonly VisitLike[],
  moved: readonly { visit: VisitLike; fromExit: string | null }[],
): Promise<void> {
  const values = new Map<string, ValueDelta>();
  const visitors = new Map<string, VisitorDelta & { workspace_id: string }>();
  const value = (property_id: string, day: string, dimension: string, v: string, workspace_id: string) => {
    const key = `${property_id}\0${day}\0${dimension}\0${v}`;
    let r = values.get(key);
    if (!r) values.set(key, (r = { property_id, day, dimension, value: v, workspace_id, visitors: 0, visits: 0, pageviews: 0, events: 0 }));
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
    for (const [dimension, column] of VISIT_KEPT) {
      const r = value(v.property_id, v.day, dimension, v[column] ?? '', v.workspace_id);
      r.visits++;
      visitor(r, v.visitor_id, 1);
    }
  }
  for (const { visit: v, fromExit } of moved) {
    if ((fromExit ?? '') === (v.exit_path ?? '')) continue;
    const from = value(v.property_id, v.day, EXIT, fromExit ?? '', v.workspace_id);
    from.visits--;
    visitor(from, v.visitor_id, -1);
    const to = value(v.property_id, v.day, EXIT, v.exit_path ?? '', v.workspace_id);
    to.visits++;
    visitor(to, v.visitor_id, 1);
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
    .filter((r) => r.visitors || r.visits || r.pageviews || r.events);
  const int = 'integer' as const;
  await insertRows(
    trx,
    'analytics_day_values',
    rows,
    { property_id: 'text', day: 'text', dimension: 'text', value: 'text', workspace_id: 'text', visitors: int, visits: int, pageviews: int, events: int },
    sql`on conflict (property_id, day, dimension, value) do update set visitors = analytics_day_values.visitors + excluded.visitors,
      visits = analytics_day_values.visits + excluded.visits, pageviews = analytics_day_values.pageviews + excluded.pageviews,
      events = analytics_day_values.events + excluded.events`,
  );
}

/**
 * Per-day figures by a kept dimension for [from, to] (days after rolled_through): visitors, visits,
 * pageviews and events as kept; with `visitSums` (visit dimensions, for bounce rate, duration, pageviews
 * or events of visits) those from the raw visits, summed without counting distinct visitors.
 */
export async function dayValueRows(db: Db, propertyId: string, from: string, to: string, dimension: string, visitSums: boolean): Promise<DayRow[]> {
  const kept = await readRows(
    db,
    db
      .selectFrom('analytics_day_values')
      .select(['day', 'value', 'visitors', 'visits', 'pageviews', 'events'])
      .where('property_id', '=', propertyId)
      .where('dimension', '=', dimension)
      .where('day', '>=', from)
      .where('day', '<=', to),
  );
  const rows = new Map<string, DayRow>();
  for (const r of kept) {
    if (!Number(r.visitors) && !Number(r.visits) && !Number(r.events)) continue; // an exit page no visit ends on any more
    rows.set(`${r.day}\0${r.value}`, {
      day: r.day,
      value: r.value || null,
      visitors: Number(r.visitors),
      visits: Number(r.visits),
      pageviews: Number(r.pageviews),
      events: Number(r.events),
      bounces: 0,
      duration_s: 0,
    });
  }
  const visitColumn = VISIT_KEPT.find(([d]) => d === dimension)?.[1];
  if (visitSums && visitColumn) {
    const value = sql<string>`coalesce(${sql.ref(visitColumn)}, '')`;
    const sums = await readRows(
      db,
      db
        .selectFrom('analytics_visits')
        .select([
          'day',
          value.as('value'),
          sql<number>`sum(pageviews)`.as('pageviews'),
          sql<number>`sum(events)`.as('events'),
          sql<number>`sum(case when events <= 1 then 1 else 0 end)`.as('bounces'),
          sql<number>`sum(duration_s)`.as('duration_s'),
        ])
        .where('property_id', '=', propertyId)
        .where('day', '>=', from)
        .where('day', '<=', to)
        .groupBy(['day', value]),
    );
    for (const s of sums) {
      const r = rows.get(`${s.day}\0${s.value}`);
      if (r) Object.assign(r, { pageviews: Number(s.pageviews), events: Number(s.events), bounces: Number(s.bounces), duration_s: Number(s.duration_s) });
    }
  }
  return [...rows.values()];
}
