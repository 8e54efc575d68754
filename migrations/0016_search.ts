import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// Full-text search over messages (subject and body; internal event lines are left out), kept in
// step with `messages` by triggers, so every insert, update and delete — imports and retention
// included — changes the index in the same transaction. SQLite: an FTS5 table over the messages'
// rowids. Postgres: a tsvector per message in its own table with a GIN index (apart from
// `messages`, so reading messages never carries the vectors).
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`create table message_search (
        message_id text primary key references messages(id) on delete cascade,
        workspace_id text not null,
        document tsvector not null)`.execute(db);
    await sql`create index message_search_document on message_search using gin (document)`.execute(db);
    await sql`create function message_search_sync() returns trigger language plpgsql as $$
      begin
        if new.kind <> 'event' then
          insert into message_search (message_id, workspace_id, document)
          values (new.id, new.workspace_id, setweight(to_tsvector('simple', coalesce(new.subject, '')), 'A') || to_tsvector('simple', coalesce(new.body, '')))
          on conflict (message_id) do update set document = excluded.document;
        end if;
        return null;
      end $$`.execute(db);
    await sql`create trigger message_search_insert after insert on messages for each row execute function message_search_sync()`.execute(db);
    await sql`create trigger message_search_update after update of subject, body on messages for each row execute function message_search_sync()`.execute(db);
    await sql`insert into message_search (message_id, workspace_id, document)
      select id, workspace_id, setweight(to_tsvector('simple', coalesce(subject, '')), 'A') || to_tsvector('simple', coalesce(body, ''))
      from messages where kind <> 'event'`.execute(db);
    return;
  }
  await sql`create virtual table messages_fts using fts5(subject, body, content='messages', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`.execute(
    db,
  );
  await sql`create trigger messages_fts_insert after insert on messages when new.kind <> 'event' begin
      insert into messages_fts(rowid, subject, body) values (new.rowid, new.subject, new.body);
    end`.execute(db);
  await sql`create trigger messages_fts_delete after delete on messages when old.kind <> 'event' begin
      insert into messages_fts(messages_fts, rowid, subject, body) values ('delete', old.rowid, old.subject, old.body);
    end`.execute(db);
  await sql`create trigger messages_fts_update after update of subject, body on messages when old.kind <> 'event' begin
      insert into messages_fts(messages_fts, rowid, subject, body) values ('delete', old.rowid, old.subject, old.body);
      insert into messages_fts(rowid, subject, body) values (new.rowid, new.subject, new.body);
    end`.execute(db);
  await sql`insert into messages_fts(rowid, subject, body) select rowid, subject, body from messages where kind <> 'event'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger message_search_update on messages`.execute(db);
    await sql`drop trigger message_search_insert on messages`.execute(db);
    await sql`drop function message_search_sync()`.execute(db);
    await sql`drop table message_search`.execute(db);
    return;
  }
  await sql`drop trigger messages_fts_update`.execute(db);
  await sql`drop trigger messages_fts_delete`.execute(db);
  await sql`drop trigger messages_fts_insert`.execute(db);
  await sql`drop table messages_fts`.execute(db);
}
