// The visits conversations came from (analytics_conversation_visits): read with the conversation,
// deleted with it. Attaching them is attribution.ts.
import { z } from '@hono/zod-openapi';
import type { AnalyticsConversationVisitsTable, Db } from '../db/schema.js';

/** Pages listed with a conversation's visit (the newest that day, oldest first). */
export const MAX_VISIT_PAGES = 50;

export const ConversationVisitSchema = z
  .object({
    property_id: z.string(),
    started_at: z.string().openapi({ description: 'when the visit began' }),
    entry_page: z.string().openapi({ description: 'the first page of the visit (path, no query)' }),
    referrer: z.string().nullable().openapi({ description: 'the referring site’s host' }),
    source: z.string().nullable().openapi({ description: 'utm_source, ref or source of the entry page, else the referrer' }),
    utm: z.object({ source: z.string().nullable(), medium: z.string().nullable(), campaign: z.string().nullable() }),
    country: z.string().nullable().openapi({ description: 'ISO 3166-1 code; null without a location database' }),
    region: z.string().nullable(),
    city: z.string().nullable(),
    browser: z.string().nullable(),
    os: z.string().nullable(),
    device: z.enum(['desktop', 'mobile', 'tablet']).nullable(),
    pages: z.array(z.object({ path: z.string(), at: z.string() })).openapi({
      description: `the visitor’s pageviews that day up to the conversation, oldest first (the last ${MAX_VISIT_PAGES})`,
    }),
  })
  .openapi('ConversationVisit', { description: 'the web visit (analytics) a widget conversation came from' });

export type ConversationVisit = z.infer<typeof ConversationVisitSchema>;

export function formatVisit(r: AnalyticsConversationVisitsTable): ConversationVisit {
  return {
    property_id: r.property_id,
    started_at: r.started_at,
    entry_page: r.entry_path,
    referrer: r.referrer,
    source: r.source,
    utm: { source: r.utm_source, medium: r.utm_medium, campaign: r.utm_campaign },
    country: r.country,
    region: r.region,
    city: r.city,
    browser: r.browser,
    os: r.os,
    device: r.device === 'desktop' || r.device === 'mobile' || r.device === 'tablet' ? r.device : null,
    pages: JSON.parse(r.pages) as ConversationVisit['pages'],
  };
}

/** The visit a conversation came from, or null. */
export async function conversationVisit(db: Db, conversationId: string): Promise<ConversationVisit | null> {
  const row = await db.selectFrom('analytics_conversation_visits').selectAll().where('conversation_id', '=', conversationId).executeTakeFirst();
  return row ? formatVisit(row) : null;
}

/** Deletes the visits of conversations being deleted (called by their deletion, in its transaction). */
export async function deleteVisitsOfConversations(db: Db, conversationIds: readonly string[]): Promise<void> {
  if (conversationIds.length) await db.deleteFrom('analytics_conversation_visits').where('conversation_id', 'in', conversationIds).execute();
}
