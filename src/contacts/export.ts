// CSV export of the contacts the list's filters find (GET /v1/contacts/export.csv), newest first:
// id, name, emails (separated by "; "), one external_id:<inbox> column per inbox (repeated when a
// contact has several ids there), one attr:<key> column per attribute, created_at. The import's
// suggested mapping reads these headers back, so an export imported again gives the same contacts.
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { type CsvCell, csvText } from '../platform/csv.js';
import { invalid } from '../platform/errors.js';
import { type ContactFilter, filteredContacts } from './list.js';
import { type ContactView, loadContactViews } from './store.js';

export const MAX_EXPORT_ROWS = 100_000;
const PAGE = 1000;

export async function exportContactsCsv(ctx: Pick<Ctx, 'db'>, access: Access, filter: ContactFilter): Promise<string> {
  const views: ContactView[] = [];
  let before: string | undefined;
  for (;;) {
    let q = filteredContacts(ctx.db, access, filter);
    if (before) q = q.where('contacts.id', '<', before);
    const ids = (await q.orderBy('contacts.id', 'desc').limit(PAGE).execute()).map((r) => r.id);
    if (ids.length === 0) break;
    if (views.length + ids.length > MAX_EXPORT_ROWS) throw invalid(`more than ${MAX_EXPORT_ROWS} contacts match; narrow the filters and export in parts`);
    const loaded = await loadContactViews(ctx.db, ids);
    for (const id of ids) views.push(loaded.get(id)!);
    before = ids[ids.length - 1];
    if (ids.length < PAGE) break;
  }
  const reach = access.inboxIds;
  const idsPerInbox = new Map<string, number>();
  const keys: string[] = [];
  const seenKeys = new Set<string>();
  for (const v of views) {
    const counts = new Map<string, number>();
    for (const x of v.externalIds) if (reach === null || reach.includes(x.inbox_id)) counts.set(x.inbox_id, (counts.get(x.inbox_id) ?? 0) + 1);
    for (const [inbox, n] of counts) idsPerInbox.set(inbox, Math.max(n, idsPerInbox.get(inbox) ?? 0));
    for (const k of Object.keys(JSON.parse(v.contact.attributes))) {
      if (!seenKeys.has(k)) {
        seenKeys.add(k);
        keys.push(k);
      }
    }
  }
  const inboxes = [...idsPerInbox.keys()].sort();
  const header: string[] = ['id', 'name', 'emails'];
  for (const inbox of inboxes) for (let i = 0; i < idsPerInbox.get(inbox)!; i++) header.push(`external_id:${inbox}`);
  for (const k of keys) header.push(`attr:${k}`);
  header.push('created_at');
  const rows: CsvCell[][] = [header];
  for (const v of views) {
    const attributes = JSON.parse(v.contact.attributes) as Record<string, unknown>;
    const row: CsvCell[] = [v.contact.id, v.contact.name, v.emails.join('; ')];
    for (const inbox of inboxes) {
      const mine = v.externalIds.filter((x) => x.inbox_id === inbox).map((x) => x.external_id);
      for (let i = 0; i < idsPerInbox.get(inbox)!; i++) row.push(mine[i] ?? '');
    }
    for (const k of keys) {
      const value = attributes[k];
      row.push(value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));
    }
    row.push(v.contact.created_at);
    rows.push(row);
  }
  return csvText(rows);
}
