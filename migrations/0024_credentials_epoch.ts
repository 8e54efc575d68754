import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// One counter that moves whenever a credential may stop holding or change what it grants: a key
// revoked, changed, expiring sooner or deleted; a session ended or cut short; a membership added,
// changed or removed; a person's address changed or the person deleted; a workspace deleted. The
// triggers bump it in the transaction of the change, whoever makes it (any server process, a `svc`
// command), so a process that reads the counter before trusting its cached credentials
// (src/auth/credentials.ts) sees every change on its next request. The columns written on every
// use (last_used_at, last_seen_at, a session's sliding expiry) do not move it.
const CHANGES: { table: string; name: string; event: string; when?: string }[] = [
  { table: 'api_keys', name: 'api_keys_changed', event: 'update of revoked_at, expires_at, scopes, inbox_ids, workspace_id, secret_hash' },
  { table: 'api_keys', name: 'api_keys_deleted', event: 'delete' },
  { table: 'sessions', name: 'sessions_cut_short', event: 'update of expires_at', when: 'new.expires_at < old.expires_at' },
  { table: 'sessions', name: 'sessions_changed', event: 'update of person_id, token_hash' },
  { table: 'sessions', name: 'sessions_deleted', event: 'delete' },
  { table: 'memberships', name: 'memberships_added', event: 'insert' },
  { table: 'memberships', name: 'memberships_changed', event: 'update of role, inbox_ids, person_id, workspace_id' },
  { table: 'memberships', name: 'memberships_deleted', event: 'delete' },
  { table: 'people', name: 'people_changed', event: 'update of email' },
  { table: 'people', name: 'people_deleted', event: 'delete' },
  { table: 'workspaces', name: 'workspaces_changed', event: 'update of deleted_at' },
  { table: 'workspaces', name: 'workspaces_deleted', event: 'delete' },
];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credentials_epoch')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('credentials_epoch').values({ id: 1, epoch: 1 }).execute();
  if (isPostgres(db)) {
    await sql`create function credentials_epoch_bump() returns trigger language plpgsql as $$
      begin
        update credentials_epoch set epoch = epoch + 1 where id = 1;
        return null;
      end $$`.execute(db);
    for (const c of CHANGES) {
      // A statement-level trigger bumps once per statement (a workspace deletion removes many keys);
      // one with a condition on the row's old and new values must be row-level.
      const each = c.when ? `for each row when (${c.when})` : 'for each statement';
      await sql.raw(`create trigger credentials_epoch_${c.name} after ${c.event} on ${c.table} ${each} execute function credentials_epoch_bump()`).execute(db);
    }
    return;
  }
  for (const c of CHANGES) {
    await sql
      .raw(
        `create trigger credentials_epoch_${c.name} after ${c.event} on ${c.table} ${c.when ? `when ${c.when} ` : ''}begin
          update credentials_epoch set epoch = epoch + 1 where id = 1;
        end`,
      )
      .execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const c of CHANGES) {
    await sql.raw(isPostgres(db) ? `drop trigger credentials_epoch_${c.name} on ${c.table}` : `drop trigger credentials_epoch_${c.name}`).execute(db);
  }
  if (isPostgres(db)) await sql`drop function credentials_epoch_bump()`.execute(db);
  await db.schema.dropTable('credentials_epoch').execute();
}
