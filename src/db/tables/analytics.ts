// Web analytics (migration 0034): properties, raw events and visits, rollups, salts, limits, usage.

export interface AnalyticsPropertiesTable {
  id: string;
  workspace_id: string;
  /** Lower-case host name, without www. */
  domain: string;
  name: string;
  /** 1: pages on subdomains of the domain count too. */
  subdomains: number;
  chat_channel_id: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The last UTC day the rollup job summed up. */
  rolled_through: string | null;
}

export interface AnalyticsLimitsTable {
  workspace_id: string;
  monthly_events: number;
  updated_at: string;
}

export interface AnalyticsUsageTable {
  workspace_id: string;
  /** YYYY-MM, UTC. */
  month: string;
  events: number;
  warned_80_at: string | null;
  warned_100_at: string | null;
}

/** The random salt of one UTC day; only today's and yesterday's exist. */
export interface AnalyticsSaltsTable {
  day: string;
  salt: string;
  created_at: string;
}

export interface AnalyticsEventsTable {
  id: string;
  property_id: string;
  workspace_id: string;
  at: string;
  day: string;
  name: string;
  /** Hash of the day's salt, property, address and user agent; null when the browser sent Sec-GPC: 1. */
  visitor_id: string | null;
  visit_id: string | null;
  path: string;
  referrer: string | null;
  source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  /** ISO 3166-1 code from the location database; null without one. */
  country: string | null;
  /** With a city database: the first subdivision's name and the city's name (English). */
  region: string | null;
  city: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  /** JSON object of custom event props. */
  props: string | null;
}

export interface AnalyticsVisitsTable {
  id: string;
  property_id: string;
  workspace_id: string;
  visitor_id: string;
  day: string;
  started_at: string;
  last_at: string;
  entry_path: string;
  exit_path: string;
  pageviews: number;
  events: number;
  /** Seconds from the first to the last event. */
  duration_s: number;
  referrer: string | null;
  source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  /** ISO 3166-1 code from the location database; null without one. */
  country: string | null;
  /** With a city database: the first subdivision's name and the city's name (English). */
  region: string | null;
  city: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
}

export interface AnalyticsRollupsTable {
  property_id: string;
  workspace_id: string;
  day: string;
  dimension: string;
  value: string;
  visitors: number;
  pageviews: number;
  events: number;
  visits: number;
  bounces: number;
  duration_s: number;
}

/** A visitor seen on a property that day (migration 0070): the first event of the day inserts it. Kept until the day is rolled up. */
export interface AnalyticsDayVisitorsTable {
  property_id: string;
  day: string;
  visitor_id: string;
  workspace_id: string;
}

/** A day's unfiltered totals as the writer commits its batches (migration 0070). Kept until the day is rolled up. */
export interface AnalyticsDayTotalsTable {
  property_id: string;
  day: string;
  workspace_id: string;
  visitors: number;
  pageviews: number;
  events: number;
  /** Visits that started that day, their bounces (at most one event) and seconds (migration 0080). */
  visits: number;
  bounces: number;
  duration_s: number;
}

/** The visit a widget conversation came from (migration 0043), copied when it started. */
export interface AnalyticsConversationVisitsTable {
  conversation_id: string;
  workspace_id: string;
  property_id: string;
  visit_id: string;
  started_at: string;
  entry_path: string;
  referrer: string | null;
  source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  /** JSON array of {path, at}: that visitor's pageviews that day up to the conversation. */
  pages: string;
  attached_at: string;
}

/** How many events (event dimensions) or visits (visit dimensions) a visitor has with a value that day (migration 0073). Kept until the day is rolled up. */
export interface AnalyticsDayValueVisitorsTable {
  property_id: string;
  day: string;
  dimension: string;
  /** '' for none. */
  value: string;
  visitor_id: string;
  n: number;
}

/** A day's figures per dimension value as the writer commits its batches (migration 0073; kept dimensions: intraday-values.ts). */
export interface AnalyticsDayValuesTable {
  property_id: string;
  day: string;
  dimension: string;
  /** '' for none. */
  value: string;
  workspace_id: string;
  visitors: number;
  /** Visit dimensions only. */
  visits: number;
  /** Event dimensions: the value's pageviews; visit dimensions: the sum of its visits' pageviews (migration 0080). */
  pageviews: number;
  /** Event dimensions: the value's events; visit dimensions: the sum of its visits' events (migration 0080). */
  events: number;
  /** Visit dimensions only: visits with at most one event. */
  bounces: number;
  /** Visit dimensions only: the sum of its visits' seconds. */
  duration_s: number;
}

export interface AnalyticsTables {
  analytics_properties: AnalyticsPropertiesTable;
  analytics_limits: AnalyticsLimitsTable;
  analytics_usage: AnalyticsUsageTable;
  analytics_salts: AnalyticsSaltsTable;
  analytics_events: AnalyticsEventsTable;
  analytics_visits: AnalyticsVisitsTable;
  analytics_rollups: AnalyticsRollupsTable;
  analytics_day_visitors: AnalyticsDayVisitorsTable;
  analytics_day_totals: AnalyticsDayTotalsTable;
  analytics_day_value_visitors: AnalyticsDayValueVisitorsTable;
  analytics_day_values: AnalyticsDayValuesTable;
  analytics_conversation_visits: AnalyticsConversationVisitsTable;
}
