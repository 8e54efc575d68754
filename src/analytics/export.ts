// CSV of one stats answer (GET /v1/analytics/export): the same figures as GET /v1/analytics/stats,
// one row per dimension value or day, or one row per metric without a dimension. Values a
// spreadsheet would run as a formula (=, +, -, @, tab, CR at the start: page paths and UTM tags come
// from visitors) are escaped by csv-stringify.
import { stringify } from 'csv-stringify/sync';
import { PROPS_PREFIX } from './props.js';
import type { StatsAnswer } from './reports.js';

export function statsCsv(answer: StatsAnswer): string {
  const options = { escape_formulas: true, record_delimiter: 'windows' as const };
  if (!Array.isArray(answer.results)) {
    const rows = Object.entries(answer.results).map(([metric, v]) => [metric, v.value, v.change ?? '']);
    return stringify([['metric', 'value', 'change_percent'], ...rows], options);
  }
  const dimension = answer.dimension ?? '';
  const key = dimension === 'time:day' ? 'date' : dimension.startsWith(PROPS_PREFIX) ? dimension.slice(PROPS_PREFIX.length) : dimension.split(':')[1];
  const columns = [key, ...answer.metrics];
  return stringify([columns, ...answer.results.map((r) => columns.map((c) => r[c] ?? ''))], options);
}

/** `analytics-<domain>-<what>-<from>-<to>.csv`, in the characters every file system takes. */
export function exportFilename(domain: string, answer: StatsAnswer): string {
  const what = answer.dimension ?? 'totals';
  const name = `analytics-${domain}-${what}-${answer.period.from}-${answer.period.to}`;
  return `${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.csv`;
}
