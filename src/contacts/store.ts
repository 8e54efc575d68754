// Queries of contacts, their addresses and external ids. A contact is read as a ContactView:
// the row with its emails (in order) and its external ids.
import { type ExpressionBuilder, sql } from 'kysely';
import { contactHasConversationIn, inboxIdsOfContactConversations } from '../conversations/store.js';
import { isPostgres } from '../db/dialect.js';
import { reusableQuery } from '../db/reusable-query.js';
import type { ContactsTable, Database, Db } from '../db/schema.js';

export type ContactRow = ContactsTable;

export interface ExternalId {
  inbox_id: string;
  external_id: string;
}

export interface ContactView {
  contact: ContactRow;
  emails: string[];
  externalIds: ExternalId[];
}

export async function loadContactViews(db: Db, ids: readonly string[]): Promise<Map<string, ContactView>> {
  const out = new Map<string, ContactView>();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return out;
  const [rows, emails, externals] = await Promise.all([
    db.selectFrom('contacts').selectAll().where('id', 'in', unique).execute(),
    db.selectFrom('contact_emails').select(['contact_id', 'email']).where('contact_id', 'in', unique).orderBy('position').orderBy('email').execute(),
    db
      .selectFrom('contact_external_ids')
      .select(['contact_id', 'inbox_id', 'external_id'])
      .where('contact_id', 'in', unique)
      .orderBy('created_at')
      .orderBy('inbox_id')
      .execute(),
  ]);
  for (const contact of rows) out.set(contact.id, { contact, emails: [], externalIds: [] });
  for (const e of emails) out.get(e.contact_id)?.emails.push(e.email);
  for (const x of externals) out.get(x.contact_id)?.externalIds.push({ inbox_id: x.inbox_id, external_id: x.external_id });
  return out;
}

/** Each contact's name and first address, as a conversation list shows them: one narrow statement instead of three views. */
export async function contactNames(db: Db, ids: readonly string[]): Promise<Map<string, { name: string | null; email: string | null }>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .selectFrom('contacts')
    .select((eb) => [
      'contacts.id',
      'contacts.name',
      eb
        .selectFrom('contact_emails')
        .select('contact_emails.email')
        .whereRef('contact_emails.contact_id', '=', 'contacts.id')
        .orderBy('contact_emails.position')
        .orderBy('contact_emails.email')
        .limit(1)
        .as('email'),
    ])
    .where('contacts.id', 'in', unique)
    .execute();
  return new Map(rows.map((r) => [r.id, { name: r.name, email: r.email }]));
}

export async function loadContactView(db: Db, workspaceId: string, id: string): Promise<ContactView | undefined> {
  const view = (await loadContactViews(db, [id])).get(id);
  return view && view.contact.workspace_id === workspaceId ? view : undefined;
}

// One contact by address as a view in one statement, compiled once (every inbound mail looks its
// sender up): the row found through the address, joined with each of its addresses and external ids.
const contactViewRowsByEmail = reusableQuery((db, workspaceId: string, email: string) =>
  db
    .selectFrom('contact_emails as found')
    .innerJoin('contacts', 'contacts.id', 'found.contact_id')
    .innerJoin('contact_emails as address', 'address.contact_id', 'contacts.id')
    .leftJoin('contact_external_ids as external', 'external.contact_id', 'contacts.id')
    .selectAll('contacts')
    .select(['address.email as view_email', 'external.inbox_id as view_inbox_id', 'external.external_id as view_external_id'])
    .where('found.workspace_id', '=', workspaceId)
    .where('found.email', '=', email)
    .orderBy('address.position')
    .orderBy('address.email')
    .orderBy('external.created_at')
    .orderBy('external.inbox_id'),
);

/** The contact that owns an address in the workspace, as a view; undefined when none does. */
export async function loadContactViewByEmail(db: Db, workspaceId: string, email: string): Promise<ContactView | undefined> {
  const rows = await contactViewRowsByEmail(db, workspaceId, email);
  if (rows.length === 0) return undefined;
  const { view_email: _e, view_inbox_id: _i, view_external_id: _x, ...contact } = rows[0];
  // Rows are (address × external id), addresses first in order: the first address's rows hold the external ids in order.
  const emails: string[] = [];
  const externalIds: ExternalId[] = [];
  for (const r of rows) {
    if (emails[emails.length - 1] !== r.view_email) emails.push(r.view_email);
    if (r.view_email === emails[0] && r.view_inbox_id !== null && r.view_external_id !== null)
      externalIds.push({ inbox_id: r.view_inbox_id, external_id: r.view_external_id });
  }
  return { contact, emails, externalIds };
}

/** The contacts owning these (normalized) addresses in the workspace, by address: one statement, then their views. */
export async function loadContactViewsByEmail(db: Db, workspaceId: string, emails: readonly string[]): Promise<Map<string, ContactView>> {
  const out = new Map<string, ContactView>();
  const unique = [...new Set(emails)];
  const owners = new Map<string, string>();
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('contact_emails')
      .select(['email', 'contact_id'])
      .where('workspace_id', '=', workspaceId)
      .where('email', 'in', unique.slice(i, i + 500))
      .execute();
    for (const r of rows) owners.set(r.email, r.contact_id);
  }
  const views = await loadContactViews(db, [...owners.values()]);
  for (const [email, id] of owners) {
    const view = views.get(id);
    if (view) out.set(email, view);
  }
  return out;
}

/** The live contact that owns an address in the workspace (addresses move to the target on merge). */
/** A contact of the workspace by id (merged ones too: `merged_into_id` says where they went). */
export async function findContact(db: Db, workspaceId: string, id: string): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function contactIdByEmail(db: Db, workspaceId: string, email: string): Promise<string | undefined> {
  const row = await db.selectFrom('contact_emails').select('contact_id').where('workspace_id', '=', workspaceId).where('email', '=', email).executeTakeFirst();
  return row?.contact_id;
}

export async function contactIdByExternalId(db: Db, workspaceId: string, inboxId: string, externalId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('contact_external_ids')
    .select('contact_id')
    .where('workspace_id', '=', workspaceId)
    .where('inbox_id', '=', inboxId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row?.contact_id;
}

/** Inboxes a contact touches: those of its conversations and of its external ids. */
export async function inboxesOfContact(db: Db, contactId: string): Promise<Set<string>> {
  const [convs, externals] = await Promise.all([
    inboxIdsOfContactConversations(db, contactId),
    db.selectFrom('contact_external_ids').select('inbox_id').distinct().where('contact_id', '=', contactId).execute(),
  ]);
  return new Set([...convs, ...externals.map((r) => r.inbox_id)]);
}

/** A condition over `contacts`: reachable from these inboxes (a conversation there, or an external id of one). */
export function reachableFrom(eb: ExpressionBuilder<Database, 'contacts'>, inboxIds: readonly string[]) {
  const inboxes = inboxIds.length ? [...inboxIds] : [''];
  return eb.or([
    contactHasConversationIn(eb, inboxes),
    eb.exists(
      eb
        .selectFrom('contact_external_ids')
        .select('contact_external_ids.contact_id')
        .whereRef('contact_external_ids.contact_id', '=', 'contacts.id')
        .where('contact_external_ids.inbox_id', 'in', inboxes),
    ),
  ]);
}

/** Unmerged contacts of the workspace, reachable from `inboxIds` (null: every inbox). */
function reachableContacts(db: Db, workspaceId: string, inboxIds: readonly string[] | null) {
  const q = db.selectFrom('contacts').select('contacts.id').where('contacts.workspace_id', '=', workspaceId).where('contacts.merged_into_id', 'is', null);
  return inboxIds === null ? q : q.where((eb) => reachableFrom(eb, inboxIds));
}

/** Which of these ids are unmerged contacts of the workspace reachable from `inboxIds` (null: every inbox). */
export async function reachableContactIds(
  db: Db,
  workspaceId: string,
  inboxIds: readonly string[] | null,
  contactIds: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < contactIds.length; i += 500) {
    for (const r of await reachableContacts(db, workspaceId, inboxIds)
      .where('contacts.id', 'in', contactIds.slice(i, i + 500))
      .execute())
      found.add(r.id);
  }
  return found;
}

/** The next `limit` ids of those contacts after `afterId`, in id order. */
export async function reachableContactIdsAfter(
  db: Db,
  workspaceId: string,
  inboxIds: readonly string[] | null,
  afterId: string,
  limit: number,
): Promise<string[]> {
  const rows = await reachableContacts(db, workspaceId, inboxIds).where('contacts.id', '>', afterId).orderBy('contacts.id').limit(limit).execute();
  return rows.map((r) => r.id);
}

/** Each contact's first address (lowest position), one query for all. */
export async function firstEmailsOf(db: Db, contactIds: readonly string[]): Promise<{ email: string; contactId: string }[]> {
  if (contactIds.length === 0) return [];
  const rows = await db
    .selectFrom('contact_emails')
    .select(['contact_id', 'email', 'position'])
    .where('contact_id', 'in', [...contactIds])
    .orderBy('contact_id')
    .orderBy('position')
    .execute();
  const out = new Map<string, string>();
  for (const r of rows) if (!out.has(r.contact_id)) out.set(r.contact_id, r.email);
  return [...out].map(([contactId, email]) => ({ email, contactId }));
}

/** Locks the contact's row for the rest of the transaction (Postgres; SQLite transactions are serialized). */
export async function lockContact(db: Db, contactId: string): Promise<void> {
  let q = db.selectFrom('contacts').select('id').where('id', '=', contactId);
  if (isPostgres(db as never)) q = q.forUpdate();
  await q.executeTakeFirst();
}

/**
 * Ids of the workspace's contacts whose attribute `key` exists, equals or contains `value` (compared
 * as text), as a subquery for conversation lists (saved views). The key is checked by the caller
 * (letters, digits, space, _ and -), so it is safe inside the JSON path.
 */
export function contactIdsWithAttribute(db: Db, workspaceId: string, key: string, op: 'eq' | 'contains' | 'exists', value: string | undefined) {
  const text = isPostgres(db as never)
    ? sql<string | null>`(attributes::jsonb ->> ${key}::text)`
    : sql<string | null>`json_extract(attributes, ${`$."${key}"`})`;
  let q = db.selectFrom('contacts').select('contacts.id').where('contacts.workspace_id', '=', workspaceId);
  if (op === 'exists') q = q.where(sql<boolean>`${text} is not null`);
  else if (op === 'eq') q = q.where(sql<boolean>`cast(${text} as text) = ${value ?? ''}`);
  else {
    const pattern = `%${(value ?? '').replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where(sql<boolean>`cast(${text} as text) ${sql.raw(isPostgres(db as never) ? 'ilike' : 'like')} ${pattern} escape '\\'`);
  }
  return q;
}
