import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// A notification about a channel rather than a conversation (issue 38: a mailbox reader found the
// channel's Google or Microsoft sign-in refused before any reply failed): `channel_id` names the
// channel and `conversation_id` may be null. SQLite cannot drop a NOT NULL, so there the table is
// made again; the mail lines that point at it are copied aside first (dropping the old table would
// otherwise delete them through their foreign key).
const COLUMNS = 'id, person_id, workspace_id, event_id, trigger, conversation_id, title, body, created_at, read_at, in_panel';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table notifications alter column conversation_id drop not null`.execute(db);
    await db.schema.alterTable('notifications').addColumn('channel_id', 'text').execute();
    return;
  }
  await sql`create table notifications_new (
    id text primary key,
    person_id text not null references people(id) on delete cascade,
    workspace_id text not null,
    event_id text not null,
    trigger text not null,
    conversation_id text,
    channel_id text,
    title text not null,
    body text not null,
    created_at text not null,
    read_at text,
    in_panel integer not null default 1
  )`.execute(db);
  await sql.raw(`insert into notifications_new (${COLUMNS}) select ${COLUMNS} from notifications`).execute(db);
  await sql`create table notification_mail_lines_copy as select notification_id, person_id, created_at from notification_mail_lines`.execute(db);
  await sql`drop table notification_mail_lines`.execute(db);
  await sql`drop table notifications`.execute(db);
  await sql`alter table notifications_new rename to notifications`.execute(db);
  await db.schema.createIndex('notifications_event_person').on('notifications').columns(['event_id', 'person_id']).unique().execute();
  await db.schema.createIndex('notifications_person').on('notifications').columns(['person_id', 'created_at']).execute();
  await db.schema.createIndex('notifications_workspace').on('notifications').column('workspace_id').execute();
  await db.schema.createIndex('notifications_created').on('notifications').column('created_at').execute();
  await db.schema.createIndex('notifications_person_workspace').on('notifications').columns(['person_id', 'workspace_id', 'id']).execute();
  await db.schema
    .createTable('notification_mail_lines')
    .addColumn('notification_id', 'text', (c) => c.primaryKey().references('notifications.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_mail_lines_person').on('notification_mail_lines').columns(['person_id', 'created_at']).execute();
  await sql`insert into notification_mail_lines (notification_id, person_id, created_at)
    select notification_id, person_id, created_at from notification_mail_lines_copy`.execute(db);
  await sql`drop table notification_mail_lines_copy`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Channel notifications have no conversation to keep under the old NOT NULL.
  await db.deleteFrom('notifications').where('conversation_id', 'is', null).execute();
  if (isPostgres(db)) {
    await db.schema.alterTable('notifications').dropColumn('channel_id').execute();
    await sql`alter table notifications alter column conversation_id set not null`.execute(db);
    return;
  }
  await db.schema.alterTable('notifications').dropColumn('channel_id').execute();
}
