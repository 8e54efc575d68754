// Report tables as CSV (GET /v1/reports/export.csv, GET /v1/usage/export.csv): the per-day figures
// of a report with a total row, and usage per month; written by the shared CSV writer.
import { csvText } from '../platform/csv.js';
import type { getReport, getUsage } from './service.js';

type Report = Awaited<ReturnType<typeof getReport>>;
type Usage = Awaited<ReturnType<typeof getUsage>>;
type Figures = Report['totals'];

const REPORT_HEADER = [
  'day',
  'opened',
  'closed',
  'replies',
  'first_responses',
  'first_response_median_seconds',
  'first_response_p90_seconds',
  'resolutions',
  'resolution_median_seconds',
  'resolution_p90_seconds',
  'first_response_business_median_seconds',
  'resolution_business_median_seconds',
  'ratings',
  'rating_average',
];

function figures(label: string, x: Figures) {
  return [
    label,
    x.opened,
    x.closed,
    x.replies,
    x.first_response.count,
    x.first_response.median_seconds,
    x.first_response.p90_seconds,
    x.resolution.count,
    x.resolution.median_seconds,
    x.resolution.p90_seconds,
    x.first_response_business.median_seconds,
    x.resolution_business.median_seconds,
    x.ratings.count,
    x.ratings.average,
  ];
}

export function reportCsv(report: Report): string {
  return csvText([REPORT_HEADER, ...report.days.map((d) => figures(d.day, d)), figures('total', report.totals)]);
}

export function usageCsv(usage: Usage): string {
  return csvText([
    ['month', 'conversations_billed', 'conversations_imported', 'messages_billed', 'messages_imported', 'storage_bytes_added'],
    ...usage.months.map((m) => [m.month, m.conversations.billed, m.conversations.imported, m.messages.billed, m.messages.imported, m.storage_bytes_added]),
  ]);
}
