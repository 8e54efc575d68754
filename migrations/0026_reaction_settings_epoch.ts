import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// One counter that moves whenever a setting the event reactions read for every event changes: a
// webhook endpoint added, removed or given other event types, notes or inbox filter, and an inbox's
// greeting switched. Triggers bump it in the transaction of the change, whoever makes it (any server
// process, a `svc` command), so the reactions' per-workspace cache (src/events/settings-cache.ts)
// sees the change on the next event. An endpoint's disabled state is not cached (the outbox's insert
// checks it), so disabling and enabling do not move it.
const CHANGES: { table: string; name: string; event: string }[] = [
  { table: 'webhook_endpoints', name: 'webhook_endpoints_added', event: 'insert' },
  { table: 'webhook_endpoints', name: 'webhook_endpoints_changed', event: 'update of events, include_notes, inbox_id, workspace_id' },
  { table: 'webhook_endpoints', name: 'webhook_endpoints_deleted', event: 'delete' },
  { table: 'inbox_greetings', name: 'inbox_greetings_added', event: 'insert' },
  { table: 'inbox_greetings', name: 'inbox_greetings_changed', event: 'update of enabled, inbox_id' },
  { table: 'inbox_greetings', name: 'inbox_greetings_deleted', event: 'delete' },
];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('reaction_settings_epoch')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('reaction_settings_epoch').values({ id: 1, epoch: 1 }).execute();
  if (isPostgres(db)) {
    await sql`create function reaction_settings_epoch_bump() returns trigger language plpgsql as $$
      begin
        update reaction_settings_epoch set epoch = epoch + 1 where id = 1;
        return null;
      end $$`.execute(db);
    for (const c of CHANGES) {
      await sql
        .raw(
          `create trigger reaction_settings_epoch_${c.name} after ${c.event} on ${c.table} for each statement execute function reaction_settings_epoch_bump()`,
        )
        .execute(db);
    }
    return;
  }
  for (const c of CHANGES) {
    await sql
      .raw(
        `create trigger reaction_settings_epoch_${c.name} after ${c.event} on ${c.table} begin
          update reaction_settings_epoch set epoch = epoch + 1 where id = 1;
        end`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const c of CHANGES) {
    await sql
      .raw(isPostgres(db) ? `drop trigger reaction_settings_epoch_${c.name} on ${c.table}` : `drop trigger reaction_settings_epoch_${c.name}`)
      .execute(db);
  }
  if (isPostgres(db)) await sql`drop function reaction_settings_epoch_bump()`.execute(db);
  await db.schema.dropTable('reaction_settings_epoch').execute();
}
