// Segments (issue 37): saved contact filters, the contacts list's filter under a name (a broadcast
// may take its recipients from one). The list page applies a segment by setting its own filters.
import { signal } from '@preact/signals';
import { api, must, type Schemas } from '../api';

export type Segment = Schemas['Segment'];
export type SegmentFilter = Segment['filter'];

export const segments = signal<Segment[]>([]);

export async function loadSegments(): Promise<void> {
  segments.value = (await must(api.GET('/v1/segments'))).data;
}

/** Whether two filters ask the same (empty values and key order aside). */
export function sameFilter(a: SegmentFilter, b: SegmentFilter): boolean {
  const norm = (f: SegmentFilter) =>
    JSON.stringify(
      Object.entries(f)
        .filter(([, v]) => v !== undefined && v !== '')
        .sort(([x], [y]) => x.localeCompare(y)),
    );
  return norm(a) === norm(b);
}

// The created range is shown as days where the browser is; "to" takes in the whole day. A time
// that came with a segment is kept as it is unless its day is edited.
const pad = (n: number) => String(n).padStart(2, '0');
const localDay = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
export const dayOfAfter = (iso: string) => (iso ? localDay(new Date(iso)) : '');
export const dayOfBefore = (iso: string) => (iso ? localDay(new Date(new Date(iso).getTime() - 1)) : '');
function startOf(day: string, plusDays: number): string {
  if (!day) return '';
  const [y, m, d] = day.split('-').map(Number);
  return new Date(y, m - 1, d + plusDays).toISOString();
}
export const afterOfDay = (day: string) => startOf(day, 0);
export const beforeOfDay = (day: string) => startOf(day, 1);
