// The conversation funnel of a property over a period: visitors → opened the chat → started a
// conversation → resolved (closed) → rated, overall or by source, campaign or page. Visitors and
// chat opens come from the raw events (SVC_ANALYTICS_RAW_DAYS); conversations from the visits
// copied to them (kept as long as the conversation) and their state now.
//
// It takes the dashboard's filters (`filters`, the stats API's syntax): a visit dimension keeps the
// events of matching visits and the conversations whose copied visit matches; `event:page` keeps
// pageviews and chat opens on those pages and the conversations started on them (as `by=page`
// groups them). `event:name` and `visit:exit_page` have no counterpart in a conversation's visit
// (it keeps no visitor hash, and its visit had not ended) and are refused.
import type { Ctx } from '../context.js';
import { conversationsByLastMessage } from '../conversations/visitor.js';
import { readRows } from '../db/readers.js';
import type { AnalyticsConversationVisitsTable } from '../db/schema.js';
import { invalid } from '../platform/errors.js';
import { getProperty } from './properties.js';
import { DIMENSIONS, type Filter, nextDay, parseFilters, periodRange } from './stats.js';
import { CHAT_OPENED } from './writer.js';

export const FUNNEL_GROUPS = ['source', 'campaign', 'page'] as const;
export type FunnelGroup = (typeof FUNNEL_GROUPS)[number];
export const FUNNEL_STEPS = ['visitors', 'chat_opened', 'conversations', 'resolved', 'rated'] as const;
type Step = (typeof FUNNEL_STEPS)[number];
export type FunnelRow = { value: string | null } & Record<Step, number>;

export interface FunnelQuery {
  propertyId: string;
  period?: string;
  date?: string;
  from?: string;
  to?: string;
  by?: FunnelGroup;
  /** The dashboard's filters (`visit:source==google.com;event:page==/pricing`). */
  filters?: string;
}

/** The filters the funnel cannot apply (see above). */
export const FUNNEL_UNFILTERABLE: readonly string[] = ['event:name', 'visit:exit_page'];

type ConversationVisit = Pick<
  AnalyticsConversationVisitsTable,
  'source' | 'referrer' | 'utm_source' | 'utm_medium' | 'utm_campaign' | 'country' | 'region' | 'city' | 'browser' | 'os' | 'device' | 'entry_path'
>;

/** A conversation's value of a filter's dimension (`startedOn`: the page it started on). */
function conversationValue(dimension: string, r: ConversationVisit, startedOn: string): string | null {
  if (dimension === 'event:page') return startedOn;
  const column = DIMENSIONS[dimension].column;
  return column === 'entry_path' ? r.entry_path : r[column as Exclude<keyof ConversationVisit, 'entry_path'>];
}

/** A value passes a filter: listed (==), or not listed (!=, where no value passes too, as in SQL's `not in` of the stats). */
const passes = (f: Filter, value: string | null) => (f.negate ? value === null || !f.values.includes(value) : value !== null && f.values.includes(value));

type C = Pick<Ctx, 'db' | 'clock'>;
const MAX_GROUPS = 100;

export async function conversationFunnel(ctx: C, workspaceId: string, q: FunnelQuery) {
  const property = await getProperty(ctx, workspaceId, q.propertyId);
  const filters = parseFilters(q.filters);
  const refused = filters.find((f) => FUNNEL_UNFILTERABLE.includes(f.dimension));
  if (refused) throw invalid(`the funnel cannot be filtered by ${refused.dimension}; it takes the other dimensions`);
  const { from, to } = periodRange(q.period ?? '30d', ctx.clock.now(), q);
  const end = `${nextDay(to)}T00:00:00.000Z`;
  const start = `${from}T00:00:00.000Z`;
  const groups = new Map<string | null, { visitors: Set<string>; opened: Set<string>; conversations: number; resolved: number; rated: number }>();
  const group = (value: string | null) => {
    let g = groups.get(value);
    if (!g) groups.set(value, (g = { visitors: new Set(), opened: new Set(), conversations: 0, resolved: 0, rated: 0 }));
    return g;
  };

  // Visitors and chat opens: a visitor counts in the group of the visit (source, campaign) or of the
  // page (each page they saw; "page" is where conversations start, so chat opens count by page).
  const events = await readRows(
    ctx.db,
    ctx.db
      .selectFrom('analytics_events as e')
      .leftJoin('analytics_visits as v', 'v.id', 'e.visit_id')
      .select(['e.name', 'e.visitor_id', 'e.path', 'v.source', 'v.utm_campaign'])
      .where('e.property_id', '=', property.id)
      .where('e.at', '>=', start)
      .where('e.at', '<', end)
      .where('e.visitor_id', 'is not', null)
      .where('e.name', 'in', ['pageview', CHAT_OPENED])
      .where((eb) =>
        eb.and(
          filters.map((f) => {
            const spec = DIMENSIONS[f.dimension];
            const ref = spec.table === 'events' ? (`e.${spec.column}` as const) : (`v.${spec.column}` as const);
            return f.negate ? eb.or([eb(ref, 'is', null), eb(ref, 'not in', f.values)]) : eb(ref, 'in', f.values);
          }),
        ),
      ),
  );
  for (const e of events) {
    const value = q.by === 'source' ? e.source : q.by === 'campaign' ? e.utm_campaign : q.by === 'page' ? e.path : null;
    const g = group(value);
    const who = `${e.visitor_id}`;
    if (e.name === 'pageview') g.visitors.add(who);
    else g.opened.add(who);
  }

  // Conversations: their copied visit (source, campaign, and the page the conversation started on).
  const started = await ctx.db
    .selectFrom('analytics_conversation_visits')
    .select([
      'conversation_id',
      'pages',
      'entry_path',
      'source',
      'referrer',
      'utm_source',
      'utm_medium',
      'utm_campaign',
      'country',
      'region',
      'city',
      'browser',
      'os',
      'device',
    ])
    .where('property_id', '=', property.id)
    .where('attached_at', '>=', start)
    .where('attached_at', '<', end)
    .execute()
    .then((rows) =>
      rows
        .map((r) => ({ ...r, startedOn: (JSON.parse(r.pages) as { path: string }[]).at(-1)?.path ?? r.entry_path }))
        .filter((r) => filters.every((f) => passes(f, conversationValue(f.dimension, r, r.startedOn)))),
    );
  const state = new Map<string, { closed: boolean; rated: boolean }>();
  for (let i = 0; i < started.length; i += 500) {
    const ids = started.slice(i, i + 500).map((r) => r.conversation_id);
    for (const c of await conversationsByLastMessage(ctx.db, ids, ids.length))
      state.set(c.id, { closed: c.status === 'closed', rated: c.rating_score != null });
  }
  for (const r of started) {
    const value = q.by === 'source' ? r.source : q.by === 'campaign' ? r.utm_campaign : q.by === 'page' ? r.startedOn : null;
    const g = group(value);
    const s = state.get(r.conversation_id);
    if (!s) continue; // deleted since
    g.conversations++;
    if (s.closed) g.resolved++;
    if (s.rated) g.rated++;
  }

  const rows: FunnelRow[] = [...groups].map(([value, g]) => ({
    value,
    visitors: g.visitors.size,
    chat_opened: g.opened.size,
    conversations: g.conversations,
    resolved: g.resolved,
    rated: g.rated,
  }));
  rows.sort((a, b) => b.conversations - a.conversations || b.visitors - a.visitors || String(a.value).localeCompare(String(b.value)));
  return {
    property_id: property.id,
    period: { from, to },
    by: q.by ?? null,
    filters: q.filters || null,
    steps: [...FUNNEL_STEPS],
    results: rows.slice(0, MAX_GROUPS),
  };
}
