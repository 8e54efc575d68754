// Custom event props breakdown: GET /v1/analytics/stats?dimension=event:props:<key> (Plausible's
// name). Props live only in the raw events (SVC_ANALYTICS_RAW_DAYS), so this reads them, filtered
// by event name or page, and groups by the prop's value in the process (no dialect-specific JSON SQL).
import type { Ctx } from '../context.js';
import { readRows } from '../db/readers.js';
import { invalid } from '../platform/errors.js';
import { MAX_PROP_KEY_CHARS } from './ingest.js';
import type { PropertyRow } from './properties.js';
import type { Filter } from './stats.js';

export const PROPS_PREFIX = 'event:props:';
const PROPS_METRICS = ['visitors', 'events'] as const;
/** Raw events read for one breakdown at most (a props breakdown is for custom events, not pageviews). */
export const MAX_PROPS_EVENTS = 200_000;

export async function propsBreakdown(
  ctx: Pick<Ctx, 'db'>,
  property: Pick<PropertyRow, 'id'>,
  q: { dimension: string; metrics: string | undefined; filters: Filter[]; from: string; to: string; limit: number },
) {
  const key = q.dimension.slice(PROPS_PREFIX.length);
  if (!key || key.length > MAX_PROP_KEY_CHARS) throw invalid(`name a prop: ${PROPS_PREFIX}<key> (at most ${MAX_PROP_KEY_CHARS} characters)`);
  const metrics = (q.metrics ?? 'visitors').split(',').map((m) => m.trim());
  for (const m of metrics)
    if (!(PROPS_METRICS as readonly string[]).includes(m))
      throw invalid(`with ${PROPS_PREFIX}… the metrics are ${PROPS_METRICS.join(', ')}, not ${JSON.stringify(m)}`);
  let query = ctx.db
    .selectFrom('analytics_events')
    .select(['visitor_id', 'props'])
    .where('property_id', '=', property.id)
    .where('day', '>=', q.from)
    .where('day', '<=', q.to)
    .where('props', 'is not', null);
  for (const f of q.filters) {
    const column = f.dimension === 'event:name' ? 'name' : f.dimension === 'event:page' ? 'path' : null;
    if (!column) throw invalid(`a ${PROPS_PREFIX}… breakdown filters by event:name or event:page only`);
    query = query.where(column, f.negate ? 'not in' : 'in', f.values);
  }
  const rows = await readRows(ctx.db, query.limit(MAX_PROPS_EVENTS));
  const groups = new Map<string, { visitors: Set<string>; events: number }>();
  for (const r of rows) {
    const value = (JSON.parse(r.props!) as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const text = String(value);
    let g = groups.get(text);
    if (!g) groups.set(text, (g = { visitors: new Set(), events: 0 }));
    g.events++;
    if (r.visitor_id) g.visitors.add(r.visitor_id);
  }
  const results = [...groups]
    .map(([value, g]) => {
      const row: Record<string, string | number> = { [key]: value };
      for (const m of metrics) row[m] = m === 'visitors' ? g.visitors.size : g.events;
      return row;
    })
    .sort((a, b) => Number(b[metrics[0]]) - Number(a[metrics[0]]) || String(a[key]).localeCompare(String(b[key])))
    .slice(0, q.limit);
  return { property_id: property.id, period: { from: q.from, to: q.to }, metrics, dimension: q.dimension, results, rolled_through: null };
}
