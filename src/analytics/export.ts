// CSV of one stats answer (GET /v1/analytics/export): the same figures as GET /v1/analytics/stats,
// one row per dimension value or day, or one row per metric without a dimension. Values a
// spreadsheet would run as a formula (=, +, -, @, tab, CR at the start: page paths and UTM tags come
// from visitors) are escaped by the shared CSV writer.
import { csvFilename, csvText } from '../platform/csv.js';
import { PROPS_PREFIX } from './props.js';
import type { StatsAnswer } from './reports.js';

export function statsCsv(answer: StatsAnswer): string {
  if (!Array.isArray(answer.results)) {
    const rows = Object.entries(answer.results).map(([metric, v]) => [metric, v.value, v.change ?? '']);
    return csvText([['metric', 'value', 'change_percent'], ...rows]);
  }
  const dimension = answer.dimension ?? '';
  const key = dimension === 'time:day' ? 'date' : dimension.startsWith(PROPS_PREFIX) ? dimension.slice(PROPS_PREFIX.length) : dimension.split(':')[1];
  const columns = [key, ...answer.metrics];
  return csvText([columns, ...answer.results.map((r) => columns.map((c) => r[c] as string | number | null | undefined))]);
}

/** `analytics-<domain>-<what>-<from>-<to>.csv`, in the characters every file system takes. */
export function exportFilename(domain: string, answer: StatsAnswer): string {
  const what = answer.dimension ?? 'totals';
  const name = `analytics-${domain}-${what}-${answer.period.from}-${answer.period.to}`;
  return csvFilename(name);
}
