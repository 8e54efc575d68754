import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// A member's `notification` events now carry the conversation's inbox (inbox_id and
// related_inbox_ids), so the stream shows them only while the member sees that inbox
// (canSeeEvent, src/events/service.ts). Those recorded before get it from their data
// (data.notification.inbox_id); without it they would be hidden from every inbox-limited member.
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`update events
      set inbox_id = data::jsonb -> 'notification' ->> 'inbox_id',
          related_inbox_ids = json_build_array(data::jsonb -> 'notification' ->> 'inbox_id')::text
      where type = 'notification' and inbox_id is null and (data::jsonb -> 'notification' ->> 'inbox_id') is not null`.execute(db);
    return;
  }
  await sql`update events
    set inbox_id = json_extract(data, '$.notification.inbox_id'),
        related_inbox_ids = json_array(json_extract(data, '$.notification.inbox_id'))
    where type = 'notification' and inbox_id is null and json_extract(data, '$.notification.inbox_id') is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`update events set inbox_id = null, related_inbox_ids = null where type = 'notification'`.execute(db);
}
