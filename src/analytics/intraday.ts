// The days not yet rolled up (today, and yesterday until the rollup job runs), unfiltered: the
// writer keeps each day's visitors (one row per visitor and day: the unique key decides, also
// between processes, which event is a visitor's first that day) and totals in the transaction of
// each batch, so the dashboard reads one row per day instead of counting distinct visitors over
// every raw event (issue 39). Filtered and per-dimension figures still come from the raw rows
// (stats.ts). The rollup job sums a day up from the raw rows and then deletes its rows here.
import { readRows } from '../db/readers.js';
import type { AnalyticsEventsTable, Db } from '../db/schema.js';
import { type DayRow, rawVisitSums } from './stats.js';

const CHUNK = 500;

interface DayCount {
  property_id: string;
  day: string;
  workspace_id: string;
  visitors: number;
  pageviews: number;
  events: number;
}

/** Adds a batch of events to the visitors and totals of their property and day (inside the batch's transaction). */
export async function recordIntraday(
  trx: Db,
  events: readonly Pick<AnalyticsEventsTable, 'property_id' | 'workspace_id' | 'day' | 'name' | 'visitor_id'>[],
): Promise<void> {
  const counts = new Map<string, DayCount>();
  const visitors = new Map<string, { property_id: string; day: string; visitor_id: string; workspace_id: string }>();
  for (const e of events) {
    const key = `${e.property_id}\0${e.day}`;
    let c = counts.get(key);
    if (!c) counts.set(key, (c = { property_id: e.property_id, day: e.day, workspace_id: e.workspace_id, visitors: 0, pageviews: 0, events: 0 }));
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
        })),
      )
      .execute();
  }
}

/** Per-day unfiltered sums of [from, to] (days after rolled_through): totals kept by the writer, visit sums from the raw visits. */
export async function intradayRows(db: Db, propertyId: string, from: string, to: string): Promise<DayRow[]> {
  const totals = await readRows(
    db,
    db
      .selectFrom('analytics_day_totals')
      .select(['day', 'visitors', 'pageviews', 'events'])
      .where('property_id', '=', propertyId)
      .where('day', '>=', from)
      .where('day', '<=', to),
  );
  const byDay = new Map<string, DayRow>();
  const row = (day: string) => {
    let r = byDay.get(day);
    if (!r) byDay.set(day, (r = { day, value: null, visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 }));
    return r;
  };
  for (const t of totals) Object.assign(row(t.day), { visitors: Number(t.visitors), pageviews: Number(t.pageviews), events: Number(t.events) });
  for (const v of await rawVisitSums(db, propertyId, from, to, []))
    Object.assign(row(v.day), { visits: v.visits, bounces: v.bounces, duration_s: v.duration_s });
  return [...byDay.values()];
}

/** Deletes the kept visitors, totals and values (intraday-values.ts) of a property's days through `day` (they are in the rollups now). */
export async function forgetIntraday(trx: Db, propertyId: string, day: string): Promise<void> {
  await trx.deleteFrom('analytics_day_value_visitors').where('property_id', '=', propertyId).where('day', '<=', day).execute();
  await trx.deleteFrom('analytics_day_values').where('property_id', '=', propertyId).where('day', '<=', day).execute();
  await trx.deleteFrom('analytics_day_visitors').where('property_id', '=', propertyId).where('day', '<=', day).execute();
  await trx.deleteFrom('analytics_day_totals').where('property_id', '=', propertyId).where('day', '<=', day).execute();
}
