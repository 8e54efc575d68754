// What the API shows of analytics properties and usage, and the response schemas.
import { z } from '@hono/zod-openapi';
import type { PropertyRow, Usage } from './properties.js';

export const PropertySchema = z
  .object({
    id: z.string(),
    domain: z.string().openapi({ description: 'the site’s host name (lower case, without www.)' }),
    name: z.string(),
    subdomains: z.boolean().openapi({ description: 'pages on subdomains of the domain count too' }),
    chat_channel_id: z.string().nullable().openapi({ description: 'the chat channel whose widget runs on the site' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('AnalyticsProperty');

export function formatProperty(p: PropertyRow): z.infer<typeof PropertySchema> {
  return {
    id: p.id,
    domain: p.domain,
    name: p.name,
    subdomains: p.subdomains === 1,
    chat_channel_id: p.chat_channel_id,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

export const UsageSchema = z
  .object({
    month: z.string().openapi({ description: 'the UTC month, YYYY-MM' }),
    events: z.number().int(),
    limit: z.number().int().openapi({ description: 'events a month; 0 = no limit' }),
    percent: z.number().int(),
    state: z.enum(['ok', 'warning', 'reached', 'over']).openapi({
      description: 'warning from 80 %, reached from 100 %; over from 110 %: pageviews are dropped until the next UTC month (conversation events never)',
    }),
  })
  .openapi('AnalyticsUsage');

export const formatUsage = (u: Usage): z.infer<typeof UsageSchema> => ({ ...u });
