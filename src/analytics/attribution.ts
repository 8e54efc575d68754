// A widget conversation tied to the web visit it came from. When a visitor starts a conversation on a
// chat channel that a property is linked to, the server computes that visitor's hash from the same
// request (today's salt and yesterday's, the property, the client address, the user agent: the
// same hash the tracker's events got), finds the visitor's latest visit and copies it to the
// conversation: entry page, source, campaign, country, device, and the pages viewed that day. The
// copy holds no address and no hash, and lives (and is deleted) with the conversation.
import type { Ctx } from '../context.js';
import type { AnalyticsConversationVisitsTable, Db } from '../db/schema.js';
import { DAY, iso } from '../platform/clock.js';
import { originMatches } from './ingest.js';
import { ingestionOf } from './runtime.js';
import { type ConversationVisit, formatVisit, MAX_VISIT_PAGES } from './visit-store.js';
import { dayOf, isBotAgent, visitorHash } from './visitor.js';

/** The analytics event the widget's conversations add to the visit (never dropped for the limit). */
export const CONVERSATION_STARTED = 'Conversation Started';

/** What attribution keeps until the conversation's row exists (the visit's id and its visitor). */
export interface FoundVisit {
  row: Omit<AnalyticsConversationVisitsTable, 'conversation_id' | 'attached_at'>;
  visitorId: string;
  lastPath: string;
}

export interface VisitorRequest {
  channelId: string;
  /** The client address (hashed with the salt only; never stored). */
  address: string;
  userAgent: string | undefined;
  gpc: boolean;
}

/**
 * The visit of the visitor making this request on a site whose property is linked to the chat
 * channel, or null (no linked property, no visit today or yesterday, a bot, or Sec-GPC: 1).
 */
export async function findRequestVisit(ctx: Ctx, req: VisitorRequest): Promise<FoundVisit | null> {
  if (req.gpc || isBotAgent(req.userAgent)) return null;
  const properties = await ctx.db
    .selectFrom('analytics_properties')
    .select('id')
    .where('chat_channel_id', '=', req.channelId)
    .where('deleted_at', 'is', null)
    .execute();
  if (!properties.length) return null;
  const now = ctx.clock.now();
  const salts = await ctx.db
    .selectFrom('analytics_salts')
    .select('salt')
    .where('day', 'in', [dayOf(now), dayOf(now.getTime() - DAY)])
    .execute();
  if (!salts.length) return null;
  const hashes = salts.flatMap((s) => properties.map((p) => visitorHash(s.salt, p.id, req.address, req.userAgent!)));
  // Events this process accepted a moment ago wait in its buffer: write them first.
  await ingestionOf(ctx)
    .writer.flush()
    .catch(() => {});
  const visit = await ctx.db
    .selectFrom('analytics_visits')
    .selectAll()
    .where('visitor_id', 'in', hashes)
    .orderBy('last_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!visit) return null;
  const pages = await ctx.db
    .selectFrom('analytics_events')
    .select(['path', 'at'])
    .where('property_id', '=', visit.property_id)
    .where('visitor_id', '=', visit.visitor_id)
    .where('name', '=', 'pageview')
    .where('at', '<=', iso(now))
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_VISIT_PAGES)
    .execute();
  pages.reverse();
  return {
    visitorId: visit.visitor_id,
    lastPath: pages.at(-1)?.path ?? visit.exit_path,
    row: {
      workspace_id: visit.workspace_id,
      property_id: visit.property_id,
      visit_id: visit.id,
      started_at: visit.started_at,
      entry_path: visit.entry_path,
      referrer: visit.referrer,
      source: visit.source,
      utm_source: visit.utm_source,
      utm_medium: visit.utm_medium,
      utm_campaign: visit.utm_campaign,
      country: visit.country,
      region: visit.region,
      city: visit.city,
      browser: visit.browser,
      os: visit.os,
      device: visit.device,
      pages: JSON.stringify(pages.map((p) => ({ path: p.path, at: p.at }))),
    },
  };
}

/** Stores the visit with the conversation (in the transaction that starts it); returns what the API shows. */
export async function attachVisit(db: Db, conversationId: string, found: FoundVisit, now: Date): Promise<ConversationVisit> {
  const row: AnalyticsConversationVisitsTable = { ...found.row, conversation_id: conversationId, attached_at: iso(now) };
  await db.insertInto('analytics_conversation_visits').values(row).execute();
  return formatVisit(row);
}

/** Adds the analytics event "Conversation Started" to the visit (for the funnel); never dropped for the limit. */
export function recordConversationStarted(ctx: Ctx, found: FoundVisit): void {
  const now = ctx.clock.now();
  const r = found.row;
  ingestionOf(ctx).writer.add({
    property_id: r.property_id,
    workspace_id: r.workspace_id,
    at: iso(now),
    day: dayOf(now),
    name: CONVERSATION_STARTED,
    visitor_id: found.visitorId,
    path: found.lastPath,
    referrer: r.referrer,
    source: r.source,
    utm_source: r.utm_source,
    utm_medium: r.utm_medium,
    utm_campaign: r.utm_campaign,
    utm_content: null,
    utm_term: null,
    country: r.country,
    region: r.region,
    city: r.city,
    browser: r.browser,
    os: r.os,
    device: r.device,
    props: null,
  });
}

/**
 * What widget.js needs to count the host page without /a.js: the domain of the property linked to
 * the chat channel that the page's origin belongs to (null: none, and the widget counts nothing).
 */
export async function widgetAnalytics(db: Db, channelId: string, origin: string | undefined): Promise<{ domain: string } | null> {
  const rows = await db
    .selectFrom('analytics_properties')
    .select(['domain', 'subdomains'])
    .where('chat_channel_id', '=', channelId)
    .where('deleted_at', 'is', null)
    .orderBy('domain')
    .execute();
  const found = rows.find((p) => originMatches(origin, p));
  return found ? { domain: found.domain } : null;
}
