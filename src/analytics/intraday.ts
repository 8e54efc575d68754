// The days not yet rolled up (today, and yesterday until the rollup job runs), unfiltered: the
// writer keeps each day's visitors (one row per visitor and day: the unique key decides, also
// between processes, which event is a visitor's first that day) and totals in the transaction of
// each batch, so the dashboard reads one row per day instead of counting distinct visitors over
// every raw event (issue 39). The totals also hold the sums of the visits started that day (visits,
// bounces, seconds), moved by the difference when a visit goes on (intraday-values.ts). Filtered
// figures still come from the raw rows (stats.ts). The rollup job sums a day up from the raw rows
// and then deletes its rows here.
import { readRows } from '../db/readers.js';
import type { AnalyticsEventsTable, Db } from '../db/schema.js';
import { type MovedVisit, type VisitLike, visitSums } from './intraday-values.js';
import type { DayRow } from './stats.js';

const CHUNK = 500;

interface DayCount {
  property_id: string;
  day: string;
  workspace_id: string;
  visitors: number;
  pageviews: number;
  events: number;
  visits: number;
  bounces: number;
  duration_s: number;
}

/**
 * Adds a batch to the visitors and totals of their property and day (inside the batch's
 * transaction): its events, the visits it started (as they are after the batch) and the visits it
 * moved on (the difference, on the day the visit started).
 */
export async function recordIntraday(
  trx: Db,
  events: readonly Pick<AnalyticsEventsTable, 'property_id' | 'workspace_id' | 'day' | 'name' | 'visitor_id'>[],
  started: readonly VisitLike[],
  moved: readonly MovedVisit[],
): Promise<void> {
  const counts = new Map<string, DayCount>();
  const count = (property_id: string, day: string, workspace_id: string) => {
    const key = `${property_id}\0${day}`;
    let c = counts.get(key);
    if (!c) counts.set(key, (c = { property_id, day, workspace_id, visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 }));
    return c;
  };
  const addVisit = (v: VisitLike, sign: 1 | -1) => {
    const c = count(v.property_id, v.day, v.workspace_id);
    const d = visitSums(v, sign);
    c.visits += d.visits;
    c.bounces += d.bounces;
    c.duration_s += d.duration_s;
  };
  for (const v of started) addVisit(v, 1);
  for (const { before, after } of moved) {
    addVisit(before, -1);
    addVisit(after, 1);
  }
  const visitors = new Map<string, { property_id: string; day: string; visitor_id: string; workspace_id: string }>();
  for (const e of events) {
    const key = `${e.property_id}\0${e.day}`;
    const c = count(e.property_id, e.day, e.workspace_id);
    c.events++;
    if (e.name === 'pageview') c.pageviews++;
    if (e.visitor_id)
      visitors.set(`${key}\0${e.visitor_id}`, { property_id: e.property_id, day: e.day, visitor_id: e.visitor_id, workspace_id: e.workspace_id });
  }
  // In key order, as every writer does: concurrent batches wait on each other instead of deadlocking.
  const fresh = [...visitors.keys()].sort().map((k) => visitors.get(k)!);
  for (let i = 0; i < fresh.length; i += CHUNK) {
    const inserted = await trx
      .insertInto('analytics_day_visitors')
      .values(fresh.slice(i, i + CHUNK))
      .onConflict((oc) => oc.columns(['property_id', 'day', 'visitor_id']).doNothing())
      .returning(['property_id', 'day'])
      .execute();
    for (const r of inserted) counts.get(`${r.property_id}\0${r.day}`)!.visitors++;
  }
  const rows = [...counts.keys()].sort().map((k) => counts.get(k)!);
  for (let i = 0; i < rows.length; i += CHUNK) {
    await trx
      .insertInto('analytics_day_totals')
      .values(rows.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(['property_id', 'day']).doUpdateSet((eb) => ({
          visitors: eb('analytics_day_totals.visitors', '+', eb.ref('excluded.visitors')),
          pageviews: eb('analytics_day_totals.pageviews', '+', eb.ref('excluded.pageviews')),
          events: eb('analytics_day_totals.events', '+', eb.ref('excluded.events')),
          visits: eb('analytics_day_totals.visits', '+', eb.ref('excluded.visits')),
          bounces: eb('analytics_day_totals.bounces', '+', eb.ref('excluded.bounces')),
          duration_s: eb('analytics_day_totals.duration_s', '+', eb.ref('excluded.duration_s')),
        })),
      )
      .execute();
  }
}

/** Per-day unfiltered sums of [from, to] (days after rolled_through), as kept by the writer. */
export async function intradayRows(db: Db, propertyId: string, from: string, to: string): Promise<DayRow[]> {
  const totals = await readRows(
    db,
    db
      .selectFrom('analytics_day_totals')
      .select(['day', 'visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'])
      .where('property_id', '=', propertyId)
      .where('day', '>=', from)
      .where('day', '<=', to),
  );
  return totals.map((t) => ({
    day: t.day,
    value: null,
    visitors: Number(t.visitors),
    pageviews: Number(t.pageviews),
    events: Number(t.events),
    visits: Number(t.visits),
    bounces: Number(t.bounces),
    duration_s: Number(t.duration_s),
  }));
}

/** Deletes the kept visitors, totals and values (intraday-values.ts) of a property's days through `day` (they are in the rollups now). */
export async function forgetIntraday(trx: Db, propertyId: string, day: string): Promise<void> {
  await trx.deleteFrom('analytics_day_value_visitors').where('property_id', '=', propertyId).where('day', '<=', day).execute();
  await trx.deleteFrom('analytics_day_values').where('property_id', '=', propertyId).where('day', '<=', day).execute();
  await trx.deleteFrom('analytics_day_visitors').where('property_id', '=', propertyId).where('day', '<=', day).execute();
  await trx.deleteFrom('analytics_day_totals').where('property_id', '=', propertyId).where('day', '<=', day).execute();
}
