// What every part of the dashboard asks the stats API with: the website, the period and the filters
// the member set by choosing rows (`dimension==value`, joined as the API reads them).
import { api, must } from '../api';
import { locale } from '../i18n';

export type Period = 'day' | '7d' | '30d' | 'month';
export const PERIODS: Period[] = ['day', '7d', '30d', 'month'];
export type Row = Record<string, string | number | null>;

export interface Filter {
  dimension: string;
  value: string;
}

export interface Scope {
  propertyId: string;
  period: Period;
  filters: Filter[];
}

export const number = (n: number) => n.toLocaleString(locale.value);

/** The API's `filters`: one `dimension==a|b` per dimension, `;` between them; `extra` is added as given. */
export function filterParam(filters: Filter[], extra?: string): string | undefined {
  const byDimension = new Map<string, string[]>();
  for (const f of filters) byDimension.set(f.dimension, [...(byDimension.get(f.dimension) ?? []), f.value]);
  const parts = [...byDimension].map(([d, values]) => `${d}==${values.join('|')}`);
  if (extra) parts.push(extra);
  return parts.length ? parts.join(';') : undefined;
}

/** A stable key of a scope for reloading what depends on it. */
export const scopeKey = (s: Scope) => `${s.propertyId} ${s.period} ${filterParam(s.filters) ?? ''}`;

function query(s: Scope, extra: Record<string, string>, extraFilter?: string) {
  const filters = filterParam(s.filters, extraFilter);
  return { property_id: s.propertyId, period: s.period, ...(filters ? { filters } : {}), ...extra };
}

export function stats(s: Scope, extra: Record<string, string>, extraFilter?: string) {
  return must(api.GET('/v1/analytics/stats', { params: { query: query(s, extra, extraFilter) } }));
}

/** The address of the same figures as a CSV file (the session cookie signs the download in). */
export function exportHref(s: Scope, extra: Record<string, string>, extraFilter?: string): string {
  return `/v1/analytics/export?${new URLSearchParams(query(s, extra, extraFilter))}`;
}
