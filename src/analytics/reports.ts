// What the stats API, the MCP tools and the dashboard call: the stats of a period (from rollups
// where the rollup job has summed the days up, from raw rows otherwise), the realtime figures, and
// the rollup job itself.
import type { Ctx } from '../context.js';
import { inTransaction } from '../db/transaction.js';
import { HOUR, iso, MINUTE } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import type { JobKind } from '../platform/jobs.js';
import { forgetIntraday, intradayRows } from './intraday.js';
import { dayValueRows, KEPT_DIMENSIONS } from './intraday-values.js';
import { getProperty } from './properties.js';
import { PROPS_PREFIX, propsBreakdown } from './props.js';
import {
  byDay,
  byValue,
  type DayRow,
  DIMENSIONS,
  type Filter,
  type Metric,
  metricValue,
  nextDay,
  parseFilters,
  parseMetrics,
  periodRange,
  rawRows,
  rollupRows,
  sumRows,
} from './stats.js';
import { dayOf } from './visitor.js';

export const ROLLUP_JOB = 'analytics.rollup';
/** A day is summed up once it is over and its late visits (30 idle minutes) and buffered events are in. */
const ROLLUP_DELAY_MS = HOUR;
const ROLLUP_DAYS_PER_RUN = 62;
export const MAX_BREAKDOWN_LIMIT = 1000;
export const REALTIME_WINDOW_MS = 5 * MINUTE;

type C = Pick<Ctx, 'db' | 'clock' | 'config'>;

export interface StatsQuery {
  propertyId: string;
  period?: string;
  date?: string;
  from?: string;
  to?: string;
  metrics?: string;
  dimension?: string;
  filters?: string;
  compare?: 'previous_period';
  limit?: number;
}

type MetricValues = Partial<Record<Metric, number>>;

export interface StatsAnswer {
  property_id: string;
  period: { from: string; to: string };
  metrics: Metric[];
  dimension: string | null;
  /** Without a dimension: each metric's value (and change in % against the previous period when asked). */
  results: Record<string, { value: number; change?: number | null }> | Array<Record<string, string | number | null>>;
  /** Days up to which figures came from the daily rollups (null: all from raw events). */
  rolled_through: string | null;
}

/**
 * Rows for the days of [from, to]: rollups through the property's rolled_through, after it the
 * writer's day totals (unfiltered), its kept figures (by a kept dimension: intraday-values.ts) or
 * the raw rows (other dimensions; all raw when filtered). Filters on the breakdown's own dimension
 * only pick values (each event or visit has one value of it), so they are applied to the rows.
 */
async function rowsFor(
  ctx: C,
  property: { id: string; rolled_through: string | null },
  from: string,
  to: string,
  dimension: string | null,
  allFilters: Filter[],
) {
  const own = dimension !== null && allFilters.every((f) => f.dimension === dimension);
  const filters = own ? [] : allFilters;
  const rolled = filters.length ? null : property.rolled_through;
  let rows: DayRow[] = [];
  if (rolled && rolled >= from) rows.push(...(await rollupRows(ctx.db, property.id, from, rolled < to ? rolled : to, dimension)));
  const rawFrom = rolled && rolled >= from ? nextDay(rolled) : from;
  if (rawFrom <= to) {
    rows.push(
      ...(await (!dimension && !filters.length
        ? intradayRows(ctx.db, property.id, rawFrom, to)
        : dimension && !filters.length && KEPT_DIMENSIONS.has(dimension)
          ? dayValueRows(ctx.db, property.id, rawFrom, to, dimension)
          : rawRows(ctx.db, property.id, rawFrom, to, dimension, filters))),
    );
  }
  if (own && allFilters.length) rows = rows.filter((r) => r.value !== null && allFilters.every((f) => f.values.includes(r.value!) !== f.negate));
  return { rows, rolled: rolled && rolled >= from ? (rolled < to ? rolled : to) : null };
}

export async function queryStats(ctx: C, workspaceId: string, q: StatsQuery): Promise<StatsAnswer> {
  const property = await getProperty(ctx, workspaceId, q.propertyId);
  if (q.dimension?.startsWith(PROPS_PREFIX)) {
    const { from, to } = periodRange(q.period ?? '30d', ctx.clock.now(), q);
    const limit = Math.min(q.limit ?? 100, MAX_BREAKDOWN_LIMIT);
    return (await propsBreakdown(ctx, property, {
      dimension: q.dimension,
      metrics: q.metrics,
      filters: parseFilters(q.filters),
      from,
      to,
      limit,
    })) as StatsAnswer;
  }
  const dimension = q.dimension && q.dimension !== 'time:day' ? q.dimension : null;
  if (dimension && !DIMENSIONS[dimension]) throw invalidDimension(dimension);
  const metrics = parseMetrics(q.metrics, dimension ?? undefined);
  const filters = parseFilters(q.filters);
  const { from, to } = periodRange(q.period ?? '30d', ctx.clock.now(), q);
  const { rows, rolled } = await rowsFor(ctx, property, from, to, dimension, filters);
  const values = (s: Parameters<typeof metricValue>[1]) => Object.fromEntries(metrics.map((m) => [m, metricValue(m, s)])) as MetricValues;
  const base = { property_id: property.id, period: { from, to }, metrics, rolled_through: rolled };

  if (q.dimension === 'time:day') {
    const days = byDay(rows);
    const results: Array<Record<string, string | number | null>> = [];
    for (let d = from; d <= to; d = nextDay(d)) results.push({ date: d, ...values(days.get(d) ?? sumRows([])) });
    return { ...base, dimension: 'time:day', results };
  }
  if (dimension) {
    const limit = Math.min(q.limit ?? 100, MAX_BREAKDOWN_LIMIT);
    const key = dimension.split(':')[1];
    const results = [...byValue(rows)]
      .map(([value, s]) => ({ [key]: value, ...values(s) }) as Record<string, string | number | null>)
      .sort((a, b) => Number(b[metrics[0]]) - Number(a[metrics[0]]) || String(a[key]).localeCompare(String(b[key])))
      .slice(0, limit);
    return { ...base, dimension, results };
  }
  const current = values(sumRows(rows));
  let previous: MetricValues | undefined;
  if (q.compare === 'previous_period') {
    const length = Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) + 1;
    const prevTo = nextDay(from, -1);
    const prevFrom = nextDay(from, -length);
    previous = values(sumRows((await rowsFor(ctx, property, prevFrom, prevTo, null, filters)).rows));
  }
  const results = Object.fromEntries(
    metrics.map((m) => {
      const value = current[m] ?? 0;
      if (!previous) return [m, { value }];
      const before = previous[m] ?? 0;
      return [m, { value, change: before ? Math.round(((value - before) * 100) / before) : null }];
    }),
  );
  return { ...base, dimension: null, results };
}

function invalidDimension(d: string) {
  return invalid(`unknown dimension ${JSON.stringify(d)}; dimensions: time:day, ${Object.keys(DIMENSIONS).join(', ')}, ${PROPS_PREFIX}<key>`);
}

export interface Realtime {
  property_id: string;
  /** Visitors with an event in the last 5 minutes. */
  visitors: number;
  pageviews: number;
  pages: { page: string; visitors: number }[];
}

export async function realtime(ctx: C, workspaceId: string, propertyId: string): Promise<Realtime> {
  const property = await getProperty(ctx, workspaceId, propertyId);
  const since = iso(ctx.clock.now().getTime() - REALTIME_WINDOW_MS);
  const base = ctx.db.selectFrom('analytics_events').where('property_id', '=', property.id).where('at', '>=', since);
  const totals = await base
    .select([(eb) => eb.fn.count<number>('visitor_id').distinct().as('visitors'), (eb) => eb.fn.countAll<number>().as('pageviews')])
    .where('name', '=', 'pageview')
    .executeTakeFirst();
  const pages = await base
    .select(['path', (eb) => eb.fn.count<number>('visitor_id').distinct().as('visitors')])
    .where('name', '=', 'pageview')
    .groupBy('path')
    .orderBy('visitors', 'desc')
    .orderBy('path')
    .limit(10)
    .execute();
  return {
    property_id: property.id,
    visitors: Number(totals?.visitors ?? 0),
    pageviews: Number(totals?.pageviews ?? 0),
    pages: pages.map((p) => ({ page: p.path, visitors: Number(p.visitors) })),
  };
}

/** Sums up one finished day of a property into analytics_rollups (replacing any earlier sums), and moves rolled_through. */
export async function rollUpDay(ctx: C, propertyId: string, day: string): Promise<void> {
  await inTransaction(ctx.db, async (trx) => {
    const rows: { dimension: string; r: DayRow }[] = [];
    const totals = await rawRows(trx, propertyId, day, day, null, []);
    rows.push({ dimension: '', r: totals[0] ?? { day, value: null, visitors: 0, pageviews: 0, events: 0, visits: 0, bounces: 0, duration_s: 0 } });
    for (const dimension of Object.keys(DIMENSIONS)) for (const r of await rawRows(trx, propertyId, day, day, dimension, [])) rows.push({ dimension, r });
    const property = await trx.selectFrom('analytics_properties').select('workspace_id').where('id', '=', propertyId).executeTakeFirst();
    if (!property) return;
    await trx.deleteFrom('analytics_rollups').where('property_id', '=', propertyId).where('day', '=', day).execute();
    for (let i = 0; i < rows.length; i += 200) {
      await trx
        .insertInto('analytics_rollups')
        .values(
          rows.slice(i, i + 200).map(({ dimension, r }) => ({
            property_id: propertyId,
            workspace_id: property.workspace_id,
            day,
            dimension,
            value: (r.value ?? '').slice(0, 512),
            visitors: r.visitors,
            pageviews: r.pageviews,
            events: r.events,
            visits: r.visits,
            bounces: r.bounces,
            duration_s: r.duration_s,
          })),
        )
        .execute();
    }
    await trx.updateTable('analytics_properties').set({ rolled_through: day }).where('id', '=', propertyId).execute();
    await forgetIntraday(trx, propertyId, day);
  });
}

/** Rolls up every finished day not yet summed, for every live property; returns the days summed. */
export async function rollUp(ctx: C): Promise<number> {
  const last = dayOf(ctx.clock.now().getTime() - ROLLUP_DELAY_MS - 86_400_000);
  const properties = await ctx.db
    .selectFrom('analytics_properties')
    .select(['id', 'created_at', 'rolled_through'])
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('rolled_through', 'is', null), eb('rolled_through', '<', last)]))
    .execute();
  let done = 0;
  for (const p of properties) {
    let day = p.rolled_through ? nextDay(p.rolled_through) : dayOf(new Date(p.created_at));
    for (let i = 0; i < ROLLUP_DAYS_PER_RUN && day <= last; i++, day = nextDay(day)) {
      await rollUpDay(ctx, p.id, day);
      done++;
    }
  }
  return done;
}

export function rollupJob(ctx: Ctx): JobKind {
  return {
    kind: ROLLUP_JOB,
    everyMs: HOUR,
    async run() {
      const days = await rollUp(ctx);
      if (days) ctx.log.info('analytics rollup', { days });
    },
  };
}
