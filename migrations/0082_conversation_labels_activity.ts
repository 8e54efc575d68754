import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// A label's conversations in the order lists show them. A list of one label (the panel's label views)
// walked the status's activity index and probed each conversation for the label, so a label on few
// of them read thousands of conversations for a page (bench/panel-api, 150,000 conversations: an
// open label 8 ms on SQLite and 12 ms on Postgres, a closed one 3.5 and 8 ms). Each label row now
// carries its conversation's workspace, status and last activity, kept by triggers in the writing
// transaction (a label added, a status or an activity changed: every writer, imports and merges
// included), and an index walks them in activity order: 1–2 ms for the same pages.
const COLUMNS = ['conversation_workspace_id', 'conversation_status', 'conversation_activity_at'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of COLUMNS) await db.schema.alterTable('conversation_labels').addColumn(column, 'text').execute();
  if (isPostgres(db)) {
    await sql`update conversation_labels l set conversation_workspace_id = c.workspace_id, conversation_status = c.status,
        conversation_activity_at = c.last_message_at
      from conversations c where c.id = l.conversation_id`.execute(db);
    await sql`create function conversation_labels_fill() returns trigger language plpgsql as $$
      begin
        select workspace_id, status, last_message_at into new.conversation_workspace_id, new.conversation_status, new.conversation_activity_at
          from conversations where id = new.conversation_id;
        return new;
      end $$`.execute(db);
    await sql`create trigger conversation_labels_fill before insert on conversation_labels for each row execute function conversation_labels_fill()`.execute(
      db,
    );
    await sql`create function conversation_labels_follow() returns trigger language plpgsql as $$
      begin
        update conversation_labels set conversation_status = new.status, conversation_activity_at = new.last_message_at
          where conversation_id = new.id;
        return null;
      end $$`.execute(db);
    await sql`create trigger conversation_labels_follow after update of status, last_message_at on conversations for each row
      when (old.status is distinct from new.status or old.last_message_at is distinct from new.last_message_at)
      execute function conversation_labels_follow()`.execute(db);
    await sql`analyze conversation_labels`.execute(db);
  } else {
    await sql`update conversation_labels set (conversation_workspace_id, conversation_status, conversation_activity_at) =
      (select workspace_id, status, last_message_at from conversations c where c.id = conversation_labels.conversation_id)`.execute(db);
    await sql`create trigger conversation_labels_fill after insert on conversation_labels begin
        update conversation_labels set (conversation_workspace_id, conversation_status, conversation_activity_at) =
          (select workspace_id, status, last_message_at from conversations c where c.id = new.conversation_id)
        where conversation_id = new.conversation_id and label = new.label;
      end`.execute(db);
    await sql`create trigger conversation_labels_follow after update of status, last_message_at on conversations
      when old.status is not new.status or old.last_message_at is not new.last_message_at begin
        update conversation_labels set conversation_status = new.status, conversation_activity_at = new.last_message_at
        where conversation_id = new.id;
      end`.execute(db);
  }
  await db.schema
    .createIndex('conversation_labels_activity')
    .on('conversation_labels')
    .columns(['conversation_workspace_id', 'label', 'conversation_status', 'conversation_activity_at', 'conversation_id'])
    .execute();
}
