// Web analytics tools for keys with analytics:read: the properties, a period's figures (the same
// query as GET /v1/analytics/stats) and the realtime visitors.
import { z } from 'zod';
import { formatProperty } from '../../analytics/format.js';
import { listProperties } from '../../analytics/properties.js';
import { queryStats, realtime } from '../../analytics/reports.js';
import { DIMENSIONS, METRICS, PERIODS } from '../../analytics/stats.js';
import { authorize } from '../../auth/access.js';
import { defineTool } from '../tool.js';

const readOnly = { readOnlyHint: true, openWorldHint: false } as const;
const propertyId = z.string().min(1).max(100).describe('the property id (ap_…), see list_analytics_properties');

export const analyticsTools = [
  defineTool({
    name: 'list_analytics_properties',
    title: 'List analytics properties',
    description: 'The websites this workspace counts: id, domain, name, linked chat channel.',
    input: {},
    annotations: readOnly,
    async run(_args, { ctx, access }) {
      authorize(access, 'analytics:read');
      return { data: (await listProperties(ctx, access.workspaceId)).map(formatProperty) };
    },
  }),
  defineTool({
    name: 'analytics_stats',
    title: 'Web analytics figures',
    description: `Figures of a property over a period, optionally by one dimension (${['time:day', ...Object.keys(DIMENSIONS)].join(', ')}). Metrics: ${METRICS.join(', ')}. Filters like event:page==/pricing;visit:source!=google.com.`,
    input: {
      property_id: propertyId,
      period: z.enum(PERIODS).optional().describe('default 30d'),
      date: z.string().max(10).optional().describe('the last day of day/7d/30d/month periods, YYYY-MM-DD (default today, UTC)'),
      from: z.string().max(10).optional(),
      to: z.string().max(10).optional(),
      metrics: z.string().max(200).optional().describe('comma-separated, default visitors'),
      dimension: z.string().max(50).optional(),
      filters: z.string().max(4000).optional(),
      compare: z.enum(['previous_period']).optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    },
    annotations: readOnly,
    async run(args, { ctx, access }) {
      authorize(access, 'analytics:read');
      return queryStats(ctx, access.workspaceId, { ...args, propertyId: args.property_id });
    },
  }),
  defineTool({
    name: 'analytics_realtime',
    title: 'Visitors right now',
    description: 'Visitors and pageviews of a property in the last 5 minutes, with the top pages.',
    input: { property_id: propertyId },
    annotations: readOnly,
    async run(args, { ctx, access }) {
      authorize(access, 'analytics:read');
      return realtime(ctx, access.workspaceId, args.property_id);
    },
  }),
];
