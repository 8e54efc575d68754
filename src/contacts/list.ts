// The contacts list: newest first, filtered by address, inbox and external id, open conversations,
// creation time and a free-text query over names, addresses, external ids and attributes.

import { z } from 'zod';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { contactHasConversationIn, contactHasOpenConversation } from '../conversations/store.js';
import { customFieldsOf } from '../custom-fields/store.js';
import { readRows } from '../db/readers.js';
import type { Db } from '../db/schema.js';
import { invalid } from '../platform/errors.js';
import { decodeCursor, toPageById } from '../platform/pagination.js';
import { formatContact } from './format.js';
import { normalizeAddress } from './service.js';
import { loadContactViews, reachableFrom } from './store.js';
import { matchingText, queryText, type TextShape, textShape } from './text-query.js';

export interface ContactFilter {
  email?: string;
  inboxId?: string;
  externalId?: string;
  /** Part of the name, an address, an external id or an attribute (its name or value). */
  query?: string;
  /** Only contacts with (true) or without (false) a conversation that is not closed, in inboxes the caller reaches. */
  hasOpen?: boolean;
  /** Created at or after / before these times (ISO 8601). */
  createdAfter?: string;
  createdBefore?: string;
}

const cursorShape = z.object({ id: z.string() });

export async function listContacts(ctx: Pick<Ctx, 'db'>, access: Access, filter: ContactFilter, page: { limit?: number; cursor?: string }) {
  const limit = page.limit ?? 50;
  const after = decodeCursor(page.cursor, cursorShape);
  // A page of a common text reads contacts newest first; otherwise the index's candidates (text-query.ts).
  const shape = filter.query?.trim() ? await textShape(ctx.db, access.workspaceId, queryText(filter.query)) : undefined;
  let q = filteredContacts(ctx.db, access, filter, { textShape: shape });
  if (after) q = q.where('contacts.id', '<', after.id);
  // On a reader thread (src/db/readers.ts): a text query over many contacts takes the longest.
  const rows = await readRows(ctx.db, q.orderBy('contacts.id', 'desc').limit(limit + 1));
  return toPageById(
    rows,
    limit,
    async (ids) => Promise.all([loadContactViews(ctx.db, ids), customFieldsOf(ctx.db, access.workspaceId, 'contact', ids)]),
    (r, [views, values]) => ({ ...formatContact(views.get(r.id)!, { inboxIds: access.inboxIds }), custom_fields: values.get(r.id) ?? {} }),
  );
}

/** The ids of the contacts the caller reaches that match the filter (the list, its CSV export and segments). */
export function filteredContacts(db: Db, access: Pick<Access, 'workspaceId' | 'inboxIds'>, filter: ContactFilter, how: { textShape?: TextShape } = {}) {
  if (filter.externalId !== undefined && !filter.inboxId) throw invalid('external_id needs inbox_id');
  const createdAfter = filter.createdAfter === undefined ? undefined : isoTime(filter.createdAfter, 'created_after');
  const createdBefore = filter.createdBefore === undefined ? undefined : isoTime(filter.createdBefore, 'created_before');
  let q = db.selectFrom('contacts').select('contacts.id').where('contacts.workspace_id', '=', access.workspaceId).where('contacts.merged_into_id', 'is', null);
  const reach = access.inboxIds;
  if (reach !== null) q = q.where((eb) => reachableFrom(eb, reach));
  if (filter.email) {
    let email: string;
    try {
      email = normalizeAddress(filter.email);
    } catch {
      email = filter.email.trim().toLowerCase();
    }
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('contact_emails')
          .select('contact_emails.contact_id')
          .whereRef('contact_emails.contact_id', '=', 'contacts.id')
          .where('contact_emails.email', '=', email),
      ),
    );
  }
  if (filter.inboxId) {
    const inboxId = filter.inboxId;
    const externalId = filter.externalId?.trim();
    q = q.where((eb) => {
      let sub = eb
        .selectFrom('contact_external_ids')
        .select('contact_external_ids.contact_id')
        .whereRef('contact_external_ids.contact_id', '=', 'contacts.id')
        .where('contact_external_ids.inbox_id', '=', inboxId);
      if (externalId !== undefined) sub = sub.where('contact_external_ids.external_id', '=', externalId);
      return externalId !== undefined ? eb.exists(sub) : eb.or([eb.exists(sub), contactHasConversationIn(eb, [inboxId])]);
    });
  }
  if (filter.hasOpen !== undefined) {
    const wanted = filter.hasOpen;
    q = q.where((eb) => (wanted ? contactHasOpenConversation(eb, reach) : eb.not(contactHasOpenConversation(eb, reach))));
  }
  if (createdAfter) q = q.where('contacts.created_at', '>=', createdAfter);
  if (createdBefore) q = q.where('contacts.created_at', '<', createdBefore);
  if (filter.query?.trim()) {
    const text = queryText(filter.query);
    const workspaceId = access.workspaceId;
    q = q.where((eb) => matchingText(eb, db, workspaceId, text, how.textShape ?? 'candidates'));
  }
  return q;
}

/** A time from a query parameter, as the stored ISO 8601 text (UTC, milliseconds) it is compared with. */
function isoTime(text: string, field: string): string {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(ms)) throw invalid(`${field} must be a time in ISO 8601, such as 2026-01-31T00:00:00Z`);
  return new Date(ms).toISOString();
}
