// One CSV row of a contacts import, applied in the import's transaction: the row's cells are read
// through the mapping, the contact is found by any of its addresses or external ids and updated
// (new addresses and ids added, the name set, attributes merged), or created when none matches.
// Never a second contact for the same address or id, also not for rows repeated in the file (they
// find the contact the earlier row made). A row that cannot be applied is a RowError: reported with
// its row number, nothing of it written.
import { z } from 'zod';
import type { Tx } from '../conversations/service.js';
import { iso } from '../platform/clock.js';
import { unescapeFormula } from '../platform/csv.js';
import { AppError } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import { checkAttributes, checkName, insertContact, MAX_EMAILS, MAX_EXTERNAL_IDS, normalizeAddress, recordContactUpdated } from './service.js';
import { type ExternalId, loadContactView } from './store.js';

export const ColumnMappingSchema = z.discriminatedUnion('to', [
  z.object({ to: z.literal('name') }).strict(),
  z.object({ to: z.literal('email') }).strict(),
  z.object({ to: z.literal('external_id'), inbox_id: z.string().min(1).max(100) }).strict(),
  z.object({ to: z.literal('attribute'), key: z.string().trim().min(1).max(100) }).strict(),
  z.object({ to: z.literal('ignore') }).strict(),
]);
export type ColumnMapping = z.infer<typeof ColumnMappingSchema>;

export class RowError extends Error {}

export type RowOutcome = 'created' | 'updated' | 'unchanged';

interface RowInput {
  name: string | null;
  emails: string[];
  externalIds: ExternalId[];
  attributes: Record<string, string>;
}

/** The row's values through the mapping; throws RowError for cells that cannot be a contact's. */
export function readRow(cells: readonly string[], mapping: readonly ColumnMapping[]): RowInput {
  const extra = cells.slice(mapping.length).filter((c) => c.trim() !== '');
  if (extra.length) throw new RowError(`the row has ${cells.length} cells; the header names ${mapping.length} columns`);
  const out: RowInput = { name: null, emails: [], externalIds: [], attributes: {} };
  mapping.forEach((m, i) => {
    const cell = unescapeFormula((cells[i] ?? '').trim()).trim();
    if (cell === '' || m.to === 'ignore') return;
    if (m.to === 'name') out.name = checkName(cell);
    else if (m.to === 'email') {
      for (const part of cell.split(/[\s,;]+/)) {
        if (!part) continue;
        try {
          const email = normalizeAddress(part);
          if (!out.emails.includes(email)) out.emails.push(email);
        } catch (error) {
          throw new RowError(error instanceof AppError ? error.message : `not an e-mail address: ${JSON.stringify(part.slice(0, 100))}`);
        }
      }
    } else if (m.to === 'external_id') {
      if (charCount(cell) > 255) throw new RowError('an external id is longer than 255 characters');
      if (!out.externalIds.some((x) => x.inbox_id === m.inbox_id && x.external_id === cell)) out.externalIds.push({ inbox_id: m.inbox_id, external_id: cell });
    } else out.attributes[m.key] = cell;
  });
  if (out.emails.length === 0 && out.externalIds.length === 0) {
    if (out.name === null && Object.keys(out.attributes).length === 0) throw new RowError('the row is empty');
    throw new RowError('the row has no e-mail address or external id to find or create the contact by');
  }
  if (out.emails.length > MAX_EMAILS) throw new RowError(`the row has more than ${MAX_EMAILS} addresses`);
  return out;
}

/** Finds, updates or creates the row's contact in the transaction. */
export async function applyRow(tx: Tx, workspaceId: string, row: RowInput): Promise<RowOutcome> {
  const owners = new Map<string, string>();
  if (row.emails.length) {
    const found = await tx.db
      .selectFrom('contact_emails')
      .select(['email', 'contact_id'])
      .where('workspace_id', '=', workspaceId)
      .where('email', 'in', row.emails)
      .execute();
    for (const f of found) owners.set(f.contact_id, `address ${f.email}`);
  }
  for (const x of row.externalIds) {
    const found = await tx.db
      .selectFrom('contact_external_ids')
      .select('contact_id')
      .where('workspace_id', '=', workspaceId)
      .where('inbox_id', '=', x.inbox_id)
      .where('external_id', '=', x.external_id)
      .executeTakeFirst();
    if (found && !owners.has(found.contact_id)) owners.set(found.contact_id, `external id ${JSON.stringify(x.external_id)}`);
  }
  if (owners.size > 1) {
    throw new RowError(
      `the row matches ${owners.size} different contacts (${[...owners]
        .slice(0, 3)
        .map(([id, by]) => `${id} by ${by}`)
        .join(', ')}); merge them first or fix the row`,
    );
  }
  if (owners.size === 0) {
    checkRowAttributes(row.attributes);
    if (row.externalIds.length > MAX_EXTERNAL_IDS) throw new RowError(`the row has more than ${MAX_EXTERNAL_IDS} external ids`);
    await insertContact(tx, { workspaceId, name: row.name, emails: row.emails, externalIds: row.externalIds, attributes: row.attributes });
    return 'created';
  }
  const id = [...owners.keys()][0];
  const view = (await loadContactView(tx.db, workspaceId, id))!;
  const now = tx.clock.now();
  const newEmails = row.emails.filter((e) => !view.emails.includes(e));
  const newIds = row.externalIds.filter((x) => !view.externalIds.some((y) => y.inbox_id === x.inbox_id && y.external_id === x.external_id));
  if (view.emails.length + newEmails.length > MAX_EMAILS) throw new RowError(`the contact would have more than ${MAX_EMAILS} addresses`);
  if (view.externalIds.length + newIds.length > MAX_EXTERNAL_IDS) throw new RowError(`the contact would have more than ${MAX_EXTERNAL_IDS} external ids`);
  const current = JSON.parse(view.contact.attributes) as Record<string, unknown>;
  const merged = { ...current, ...row.attributes };
  const attributes = checkRowAttributes(merged);
  const set: { name?: string | null; attributes?: string; updated_at?: string } = {};
  if (row.name !== null && row.name !== view.contact.name) set.name = row.name;
  if (attributes !== view.contact.attributes) set.attributes = attributes;
  if (Object.keys(set).length === 0 && newEmails.length === 0 && newIds.length === 0) return 'unchanged';
  const at = iso(now);
  if (newEmails.length) {
    await tx.db
      .insertInto('contact_emails')
      .values(newEmails.map((email, i) => ({ workspace_id: workspaceId, email, contact_id: id, position: view.emails.length + i, created_at: at })))
      .execute();
  }
  if (newIds.length) {
    await tx.db
      .insertInto('contact_external_ids')
      .values(newIds.map((x) => ({ workspace_id: workspaceId, inbox_id: x.inbox_id, external_id: x.external_id, contact_id: id, created_at: at })))
      .execute();
  }
  set.updated_at = at;
  await tx.db.updateTable('contacts').set(set).where('id', '=', id).execute();
  await recordContactUpdated(tx, (await loadContactView(tx.db, workspaceId, id))!, now);
  return 'updated';
}

function checkRowAttributes(attrs: Record<string, unknown>): string {
  try {
    return checkAttributes(attrs);
  } catch (error) {
    if (error instanceof AppError) throw new RowError(`the attributes are not accepted: ${error.message}`);
    throw error;
  }
}
