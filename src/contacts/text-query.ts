// The contacts list's free-text query: a substring, in any case, of a contact's name, its attributes'
// JSON text (names and values), one of its addresses or one of its external ids. LIKE wildcards in
// the query are dropped (no ESCAPE clause needed in either dialect).
//
// From 3 characters a trigram index (migration 0071: FTS5 on SQLite, pg_trgm on Postgres) finds the
// contacts that hold the text. When few do, the page is read from those candidates; when many do (a
// common word, an address domain), walking the contacts newest first and checking each is faster,
// since the page fills after a few rows. listContacts asks the index which case it is (textIsCommon).
// Shorter text has no trigram: SQLite's probe reads the texts without the index, Postgres scans (textShape).
// Every shape applies the same LIKE conditions, so all answer the same contacts.
import { type ExpressionBuilder, sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import type { Database, Db } from '../db/schema.js';

/** From this many matching rows (read no further) a text counts as common. */
const COMMON = 1000;

/**
 * How the text is matched: 'walk' checks contact by contact (newest first), `ids` are the index's
 * candidates already read, 'candidates' reads them in the query itself (CSV export and segments),
 * 'scan' reads no index (what text under 3 characters always gets; tests compare the others with it).
 */
export type TextShape = 'candidates' | 'walk' | 'scan' | { ids: string[] };

/** The query's text as it is compared: trimmed, lower case, without LIKE wildcards. */
export function queryText(query: string): string {
  return query
    .trim()
    .toLowerCase()
    .replace(/[\\%_]/g, '');
}

const indexable = (text: string) => [...text].length >= 3;

/**
 * The cheaper shape for this text: 'walk' when at least COMMON contacts hold it, else their ids.
 * Text under 3 characters has no trigram: SQLite then reads the contacts' texts in
 * `contact_search` (one short row each, stopping at COMMON); Postgres scans as before.
 */
export async function textShape(db: Db, workspaceId: string, text: string): Promise<TextShape> {
  // Postgres without trigrams: the union's scans (lower() of every name and attributes) cost more
  // than the one scan (bench/contacts: p95 143 against 83 ms).
  if (isPostgres(db) && !indexable(text)) return 'scan';
  const like = `%${text}%`;
  const rows = isPostgres(db)
    ? await pgCandidates(db, workspaceId, like).limit(COMMON).execute()
    : indexable(text)
      ? await db
          .selectFrom('contact_search')
          .select('contact_search.contact_id')
          .where('contact_search.id', 'in', sql<number>`(select rowid from contact_search_fts where body like ${like} limit ${COMMON})`)
          .execute()
      : await db.selectFrom('contact_search').select('contact_search.contact_id').where('contact_search.body', 'like', like).limit(COMMON).execute();
  return rows.length >= COMMON ? 'walk' : { ids: [...new Set(rows.map((r) => r.contact_id))] };
}

/** The condition on `contacts` (of workspace `workspaceId`) for `text` (from queryText). */
export function matchingText(eb: ExpressionBuilder<Database, 'contacts'>, db: Db, workspaceId: string, text: string, shape: TextShape) {
  const like = `%${text}%`;
  if (shape === 'scan' || (shape === 'candidates' && !indexable(text))) {
    // The workspace's matching addresses and external ids are found once (a scan of its part of
    // each table), not looked up contact by contact.
    return eb.or([
      eb(eb.fn('lower', ['contacts.name']), 'like', like),
      eb(eb.fn('lower', ['contacts.attributes']), 'like', like),
      eb('contacts.id', 'in', emailsLike(eb, workspaceId, like).select('contact_emails.contact_id')),
      eb('contacts.id', 'in', externalIdsLike(eb, workspaceId, like).select('contact_external_ids.contact_id')),
    ]);
  }
  // Contact by contact: a scalar subquery with LIMIT, which Postgres runs per row (an EXISTS or IN
  // would be made a hash of every matching address: a scan of them all).
  const eachRow = eb.or([
    eb(eb.fn('lower', ['contacts.name']), 'like', like),
    eb(eb.fn('lower', ['contacts.attributes']), 'like', like),
    eb(emailsLike(eb, workspaceId, like).select(sql<number>`1`.as('one')).whereRef('contact_emails.contact_id', '=', 'contacts.id').limit(1), 'is not', null),
    eb(
      externalIdsLike(eb, workspaceId, like).select(sql<number>`1`.as('one')).whereRef('contact_external_ids.contact_id', '=', 'contacts.id').limit(1),
      'is not',
      null,
    ),
  ]);
  if (shape === 'walk') return eachRow;
  if (shape !== 'candidates') return shape.ids.length ? eb.and([eb('contacts.id', 'in', shape.ids), eachRow]) : eb.lit(false);
  // Postgres: each condition alone reads its pg_trgm index (an OR of them reads none); the union is
  // exactly the OR. Without pg_trgm (see migration 0071) these are scans.
  if (isPostgres(db)) return eb('contacts.id', 'in', pgCandidates(db, workspaceId, like));
  // SQLite: the FTS5 table holds each contact's fields in one text, one per line; the conditions
  // then keep the contacts where one field holds the text (not a span across two).
  const candidates = eb
    .selectFrom('contact_search')
    .select('contact_search.contact_id')
    .where('contact_search.id', 'in', sql<number>`(select rowid from contact_search_fts where body like ${like})`);
  return eb.and([eb('contacts.id', 'in', candidates), eachRow]);
}

function emailsLike(eb: ExpressionBuilder<Database, 'contacts'>, workspaceId: string, like: string) {
  return eb.selectFrom('contact_emails').where('contact_emails.workspace_id', '=', workspaceId).where('contact_emails.email', 'like', like);
}

function externalIdsLike(eb: ExpressionBuilder<Database, 'contacts'>, workspaceId: string, like: string) {
  return eb
    .selectFrom('contact_external_ids')
    .where('contact_external_ids.workspace_id', '=', workspaceId)
    .where((sub) => sub(sub.fn('lower', ['contact_external_ids.external_id']), 'like', like));
}

/** Postgres: the ids of the workspace's contacts that hold `like` in a field, one branch per index. */
function pgCandidates(db: Db, workspaceId: string, like: string) {
  const named = (column: 'name' | 'attributes') =>
    db
      .selectFrom('contacts as m')
      .select('m.id as contact_id')
      .where('m.workspace_id', '=', workspaceId)
      .where((m) => m(m.fn('lower', [`m.${column}`]), 'like', like));
  const emails = db
    .selectFrom('contact_emails')
    .select('contact_emails.contact_id')
    .where('contact_emails.workspace_id', '=', workspaceId)
    .where('contact_emails.email', 'like', like);
  const externalIds = db
    .selectFrom('contact_external_ids')
    .select('contact_external_ids.contact_id')
    .where('contact_external_ids.workspace_id', '=', workspaceId)
    .where((x) => x(x.fn('lower', ['contact_external_ids.external_id']), 'like', like));
  return named('name').unionAll(named('attributes')).unionAll(emails).unionAll(externalIds);
}
