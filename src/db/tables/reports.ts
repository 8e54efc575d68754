// Report totals (migration 0019), kept by src/reports/statistics.ts.
import type { Generated } from 'kysely';

/** Per-day totals per inbox and member ('' = no member). */
export interface ReportDaysTable {
  workspace_id: string;
  day: string;
  inbox_id: string;
  member_id: string;
  opened: Generated<number>;
  closed: Generated<number>;
  replies: Generated<number>;
  ratings: Generated<number>;
  rating_sum: Generated<number>;
  rating_1: Generated<number>;
  rating_2: Generated<number>;
  rating_3: Generated<number>;
  rating_4: Generated<number>;
  rating_5: Generated<number>;
}

export type ReportDurationKind = 'first_response' | 'resolution';

export interface ReportDurationsTable {
  workspace_id: string;
  day: string;
  inbox_id: string;
  member_id: string;
  kind: ReportDurationKind;
  conversation_id: string;
  seconds: number;
  /** The same span counted in the inbox's business hours (0046; null for rows from before). */
  business_seconds?: number | null;
}

/**
 * A past day's totals, medians and p90s for one scope of a report (0072), kept once computed;
 * triggers on report_days and report_durations delete a day's rows when its rows change.
 */
export interface ReportDayFiguresTable {
  workspace_id: string;
  day: string;
  /** Which inboxes and member the figures cover (scopeKey in src/reports/durations.ts). */
  scope: string;
  /** JSON: the day's totals and its figures per duration key (KeptDay in src/reports/service.ts). */
  figures: string;
}

export interface ReportTables {
  report_days: ReportDaysTable;
  report_durations: ReportDurationsTable;
  report_day_figures: ReportDayFiguresTable;
}
