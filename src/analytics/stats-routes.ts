// GET /v1/analytics/stats and /v1/analytics/realtime: members, or keys with analytics:read.
import { isIP } from 'node:net';
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../auth/access.js';
import type { Ctx } from '../context.js';
import type { ApiApp } from '../http/app.js';
import { requireAccess } from '../http/auth.js';
import { bearer, jsonAnswer, jsonBody } from '../http/openapi.js';
import { exportFilename, statsCsv } from './export.js';
import { conversationFunnel, FUNNEL_GROUPS } from './funnel.js';
import { DROP_REASONS, eventProps, MAX_NAME_CHARS } from './ingest.js';
import { getProperty } from './properties.js';
import { MAX_BREAKDOWN_LIMIT, queryStats, realtime } from './reports.js';
import { ingestionOf } from './runtime.js';
import { DIMENSIONS, MAX_CUSTOM_DAYS, METRICS, PERIODS } from './stats.js';

const metricValue = z.object({ value: z.number(), change: z.number().nullable().optional() });
const StatsSchema = z
  .object({
    property_id: z.string(),
    period: z.object({ from: z.string(), to: z.string() }).openapi({ description: 'first and last UTC day, inclusive' }),
    metrics: z.array(z.enum(METRICS)),
    dimension: z.string().nullable(),
    results: z.union([z.record(z.string(), metricValue), z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()])))]).openapi({
      description:
        'Without a dimension: {"<metric>": {"value": n, "change": % against the previous period or null}}. With one: a list of {"<dimension name>": value, "<metric>": n, …}, best first; time:day lists every day as {"date": …}.',
    }),
    rolled_through: z.string().nullable().openapi({ description: 'the days up to this one were read from the daily rollups' }),
  })
  .openapi('AnalyticsStats');

const RealtimeSchema = z
  .object({
    property_id: z.string(),
    visitors: z.number().int().openapi({ description: 'visitors with a pageview in the last 5 minutes' }),
    pageviews: z.number().int(),
    pages: z.array(z.object({ page: z.string(), visitors: z.number().int() })),
  })
  .openapi('AnalyticsRealtime');

const day = z.string().max(10).optional();

const statsQuery = z.object({
  property_id: z.string().min(1).max(100),
  period: z.enum(PERIODS).optional().openapi({ description: 'default 30d' }),
  date: day,
  from: day,
  to: day,
  metrics: z.string().max(200).optional().openapi({ description: 'comma-separated; default visitors' }),
  dimension: z
    .string()
    .max(100)
    .optional()
    .openapi({ description: 'time:day, a visit or event dimension, or event:props:<key> (custom event props, from raw events)' }),
  filters: z.string().max(4000).optional(),
  compare: z.enum(['previous_period']).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_BREAKDOWN_LIMIT).optional(),
});

export function registerAnalyticsStatsRoutes(app: ApiApp, ctx: Ctx) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/stats',
      tags: ['analytics'],
      summary: 'Web analytics figures of a property over a period (modelled on Plausible’s Stats API)',
      description: `Periods: ${PERIODS.join(', ')} (the N days ending on \`date\`, default today UTC; month: the month of \`date\` so far; custom: \`from\`..\`to\`, at most ${MAX_CUSTOM_DAYS} days). Metrics: ${METRICS.join(', ')} (visit metrics not with event:* dimensions). Dimensions: time:day, ${Object.keys(DIMENSIONS).join(', ')}. Filters: \`dimension==a|b;dimension!=c\`. \`compare=previous_period\` adds each metric's change in %. Visitors with Sec-GPC are counted in pageviews and events, not as visitors.`,
      security: bearer,
      request: {
        query: statsQuery,
      },
      responses: { 200: jsonAnswer(StatsSchema, 'the figures') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      const q = c.req.valid('query');
      return c.json(await queryStats(ctx, access.workspaceId, { ...q, propertyId: q.property_id }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/export',
      tags: ['analytics'],
      summary: 'The same figures as GET /v1/analytics/stats, as a CSV file',
      description:
        'One row per dimension value (or per day with time:day), columns: the dimension, then each metric; without a dimension one row per metric (metric, value, change_percent). Cells a spreadsheet would run as a formula are escaped.',
      security: bearer,
      request: { query: statsQuery },
      responses: { 200: { description: 'a CSV file (attachment)', content: { 'text/csv': { schema: z.string() } } } },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      const q = c.req.valid('query');
      const answer = await queryStats(ctx, access.workspaceId, { ...q, propertyId: q.property_id });
      const property = await getProperty(ctx, access.workspaceId, q.property_id);
      return c.body(statsCsv(answer), 200, {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="${exportFilename(property.domain, answer)}"`,
        'cache-control': 'no-store',
      });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/realtime',
      tags: ['analytics'],
      summary: 'Visitors on a property’s pages in the last 5 minutes',
      security: bearer,
      request: { query: z.object({ property_id: z.string().min(1).max(100) }) },
      responses: { 200: jsonAnswer(RealtimeSchema, 'the last 5 minutes') },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      return c.json(await realtime(ctx, access.workspaceId, c.req.valid('query').property_id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/analytics/events',
      tags: ['analytics'],
      summary: 'Record an event from your server (keys with analytics:write)',
      description:
        'For what the browser does not see, e.g. a payment confirmed by the shop’s backend. `url` must be a page of the property’s domain. With the visitor’s `ip` and `user_agent` (both; never stored) the event joins that visitor’s visit like a tracker event; without them it counts with no visitor. Answers 202; `dropped` says why an event was not counted (`bot`, or `quota` past 110 % of the monthly limit).',
      security: bearer,
      request: {
        body: jsonBody(
          z
            .object({
              property_id: z.string().min(1).max(100),
              name: z.string().min(1).max(MAX_NAME_CHARS),
              url: z.string().url().max(2048),
              referrer: z.string().max(2048).nullable().optional(),
              props: eventProps.optional(),
              ip: z
                .string()
                .max(64)
                .refine((v) => isIP(v) !== 0, 'not an IP address')
                .optional(),
              user_agent: z.string().min(1).max(1000).optional(),
            })
            .strict(),
        ),
      },
      responses: {
        202: jsonAnswer(
          z.object({ accepted: z.boolean(), dropped: z.enum(DROP_REASONS as [string, ...string[]]).nullable() }).openapi('AnalyticsEventAccepted'),
          'taken (or dropped, and why)',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:write');
      const b = c.req.valid('json');
      const property = await getProperty(ctx, access.workspaceId, b.property_id);
      const dropped = await ingestionOf(ctx).takeFromServer(property, {
        name: b.name,
        url: b.url,
        referrer: b.referrer,
        props: b.props,
        address: b.ip,
        userAgent: b.user_agent,
      });
      return c.json({ accepted: dropped === null, dropped }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/analytics/funnel',
      tags: ['analytics'],
      summary: 'Visitors → chat opened → conversation started → resolved → rated, overall or by source, campaign or page',
      description:
        'Visitors and chat opens are distinct visitors (raw events, SVC_ANALYTICS_RAW_DAYS); conversations are the widget conversations tied to a visit in the period, resolved = closed now, rated = with a rating. `by=page`: the pages visitors saw and the page each conversation started on ("pages that start conversations"). At most 100 groups, most conversations first.',
      security: bearer,
      request: {
        query: z.object({
          property_id: z.string().min(1).max(100),
          period: z.enum(PERIODS).optional().openapi({ description: 'default 30d' }),
          date: day,
          from: day,
          to: day,
          by: z.enum(FUNNEL_GROUPS).optional(),
          filters: z.string().max(4000).optional().openapi({
            description:
              'the dashboard’s filters, as in GET /v1/analytics/stats (`visit:source==google.com;event:page==/pricing`); a visit dimension keeps the events of matching visits and the conversations whose visit matches, `event:page` the pageviews and chat opens on those pages and the conversations started there; event:name and visit:exit_page are refused (400)',
          }),
        }),
      },
      responses: {
        200: jsonAnswer(
          z
            .object({
              property_id: z.string(),
              period: z.object({ from: z.string(), to: z.string() }),
              by: z.enum(FUNNEL_GROUPS).nullable(),
              filters: z.string().nullable(),
              steps: z.array(z.string()),
              results: z.array(
                z.object({
                  value: z.string().nullable().openapi({ description: 'the source, campaign or page (null: none / all)' }),
                  visitors: z.number().int(),
                  chat_opened: z.number().int(),
                  conversations: z.number().int(),
                  resolved: z.number().int(),
                  rated: z.number().int(),
                }),
              ),
            })
            .openapi('AnalyticsFunnel'),
          'the funnel',
        ),
      },
    }),
    async (c) => {
      const access = await requireAccess(c, ctx);
      authorize(access, 'analytics:read');
      const q = c.req.valid('query');
      return c.json(await conversationFunnel(ctx, access.workspaceId, { ...q, propertyId: q.property_id }), 200);
    },
  );
}
