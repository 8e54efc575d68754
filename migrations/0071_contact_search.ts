import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// A trigram index for the contacts list's free-text query (a substring, in any case, of the name, the
// attributes' JSON text, an address or an external id: src/contacts/text-query.ts), which scanned
// every contact of the workspace (bench/contacts, 40,000 contacts: a rare term's p95 120 ms on SQLite,
// 210 ms on Postgres). The index only narrows the candidates; the list still applies the same LIKE
// conditions to them, so the answers are exactly what the scan found.
//
// SQLite: `contact_search` holds one text per contact (name, attributes, addresses and external ids,
// one per line) and an FTS5 table with the trigram tokenizer indexes it (external content over the
// integer key, which VACUUM keeps). Triggers on contacts, contact_emails and contact_external_ids
// rewrite a contact's text in the writing transaction: creation, edits, merges (addresses and ids
// moving), imports, deletion and a workspace's deletion all pass through them.
//
// Postgres: GIN indexes with pg_trgm's operator class on the same expressions the query compares
// (kept by Postgres itself). pg_trgm is a trusted extension (Postgres 13+): a role with CREATE on the
// database may add it. When it cannot be added (not installed, or no right), the migration leaves the
// indexes out and searches scan as before; adding the extension and these indexes later by hand
// (README.md, Postgres) makes them fast without any other change.
const PG_INDEXES = [
  ['contacts_name_trgm', 'contacts', 'lower(name)'],
  ['contacts_attributes_trgm', 'contacts', 'lower(attributes)'],
  ['contact_emails_email_trgm', 'contact_emails', 'email'],
  ['contact_external_ids_trgm', 'contact_external_ids', 'lower(external_id)'],
] as const;

/** The searched text of contact `id` (an SQL expression); null when the contact is gone. */
const body = (id: string) => `(select coalesce(c.name, '') || char(10) || c.attributes
    || char(10) || coalesce((select group_concat(e.email, char(10)) from contact_emails e where e.contact_id = c.id), '')
    || char(10) || coalesce((select group_concat(x.external_id, char(10)) from contact_external_ids x where x.contact_id = c.id), '')
  from contacts c where c.id = ${id})`;
const refresh = (id: string) => `update contact_search set body = coalesce(${body(id)}, body) where contact_id = ${id};`;

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    if (!(await trigramAvailable(db))) return;
    for (const [name, table, expr] of PG_INDEXES) await sql.raw(`create index ${name} on ${table} using gin ((${expr}) gin_trgm_ops)`).execute(db);
    return;
  }
  const statements = [
    'create table contact_search (id integer primary key, contact_id text not null unique, body text not null)',
    `create virtual table contact_search_fts using fts5(body, content='contact_search', content_rowid='id', tokenize='trigram')`,
    `create trigger contact_search_fts_insert after insert on contact_search begin
       insert into contact_search_fts(rowid, body) values (new.id, new.body);
     end`,
    `create trigger contact_search_fts_delete after delete on contact_search begin
       insert into contact_search_fts(contact_search_fts, rowid, body) values ('delete', old.id, old.body);
     end`,
    `create trigger contact_search_fts_update after update of body on contact_search begin
       insert into contact_search_fts(contact_search_fts, rowid, body) values ('delete', old.id, old.body);
       insert into contact_search_fts(rowid, body) values (new.id, new.body);
     end`,
    `create trigger contacts_search_insert after insert on contacts begin
       insert into contact_search(contact_id, body) values (new.id, ${body('new.id')});
     end`,
    `create trigger contacts_search_update after update of name, attributes on contacts begin ${refresh('new.id')} end`,
    `create trigger contacts_search_delete after delete on contacts begin
       delete from contact_search where contact_id = old.id;
     end`,
  ];
  for (const table of ['contact_emails', 'contact_external_ids']) {
    statements.push(
      `create trigger ${table}_search_insert after insert on ${table} begin ${refresh('new.contact_id')} end`,
      `create trigger ${table}_search_update after update on ${table} begin ${refresh('old.contact_id')} ${refresh('new.contact_id')} end`,
      `create trigger ${table}_search_delete after delete on ${table} begin ${refresh('old.contact_id')} end`,
    );
  }
  for (const s of statements) await sql.raw(s).execute(db);
  await sql.raw(`insert into contact_search(contact_id, body) select id, ${body('contacts.id')} from contacts`).execute(db);
}

/** Whether pg_trgm is there, or could be added here (a failed attempt leaves the migration's transaction usable). */
async function trigramAvailable(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(db);
  if (rows[0].n > 0) return true;
  await sql`savepoint add_pg_trgm`.execute(db);
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`release savepoint add_pg_trgm`.execute(db);
    return true;
  } catch (e) {
    await sql`rollback to savepoint add_pg_trgm`.execute(db);
    process.stderr.write(`migration 0071: pg_trgm could not be added (${(e as Error).message}); contact searches will scan\n`);
    return false;
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const [name] of PG_INDEXES) await sql.raw(`drop index if exists ${name}`).execute(db);
    return;
  }
  for (const table of ['contact_emails', 'contact_external_ids'])
    for (const op of ['insert', 'update', 'delete']) await sql.raw(`drop trigger ${table}_search_${op}`).execute(db);
  for (const op of ['insert', 'update', 'delete']) await sql.raw(`drop trigger contacts_search_${op}`).execute(db);
  await sql`drop table contact_search_fts`.execute(db);
  await sql`drop table contact_search`.execute(db);
}
