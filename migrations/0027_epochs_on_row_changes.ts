import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// The credentials epoch (0024) and the reaction settings epoch (0026) move only when a row really
// changed. On Postgres their triggers were statement-level, so a statement that changed no row (the
// retention run's delete of expired sessions when none had expired, a workspace deletion's last
// batch, an update matching nothing) still moved an epoch and every process emptied its cache. Now
// every trigger is row-level on both databases, and an update counts only when a watched column's
// value differs (setting a role to the role it had moves nothing).
//
// Postgres: transition tables (REFERENCING OLD TABLE) are not allowed on triggers with a column
// list (UPDATE OF …), and a row-level trigger that bumped once per row would write the epoch row once
// per deleted key in a workspace deletion. So the function moves the epoch at the first changed row
// of a transaction and marks the transaction (a transaction-local setting, undone with an aborted
// savepoint together with the bump): one move per transaction, whatever the number of rows, and
// none for a statement that changed no row. SQLite's triggers are row-level (its only kind) and its
// bump is a cheap in-file write, so it moves once per changed row.

type Watched = {
  table: string;
  /** The trigger's name after `<epoch>_` (the same names as 0024 and 0026). */
  name: string;
  event: 'insert' | 'delete' | 'update';
  /** For updates: the columns whose change counts. */
  columns?: string[];
  /** For updates: a condition of its own instead of "a column's value differs". */
  when?: string;
};

const EPOCHS: { epoch: string; watched: Watched[] }[] = [
  {
    epoch: 'credentials_epoch',
    watched: [
      {
        table: 'api_keys',
        name: 'api_keys_changed',
        event: 'update',
        columns: ['revoked_at', 'expires_at', 'scopes', 'inbox_ids', 'workspace_id', 'secret_hash'],
      },
      { table: 'api_keys', name: 'api_keys_deleted', event: 'delete' },
      // Only a cut: the sliding expiry of a session in use lengthens it.
      { table: 'sessions', name: 'sessions_cut_short', event: 'update', columns: ['expires_at'], when: 'new.expires_at < old.expires_at' },
      { table: 'sessions', name: 'sessions_changed', event: 'update', columns: ['person_id', 'token_hash'] },
      { table: 'sessions', name: 'sessions_deleted', event: 'delete' },
      { table: 'memberships', name: 'memberships_added', event: 'insert' },
      { table: 'memberships', name: 'memberships_changed', event: 'update', columns: ['role', 'inbox_ids', 'person_id', 'workspace_id'] },
      { table: 'memberships', name: 'memberships_deleted', event: 'delete' },
      { table: 'people', name: 'people_changed', event: 'update', columns: ['email'] },
      { table: 'people', name: 'people_deleted', event: 'delete' },
      { table: 'workspaces', name: 'workspaces_changed', event: 'update', columns: ['deleted_at'] },
      { table: 'workspaces', name: 'workspaces_deleted', event: 'delete' },
    ],
  },
  {
    epoch: 'reaction_settings_epoch',
    watched: [
      { table: 'webhook_endpoints', name: 'webhook_endpoints_added', event: 'insert' },
      { table: 'webhook_endpoints', name: 'webhook_endpoints_changed', event: 'update', columns: ['events', 'include_notes', 'inbox_id', 'workspace_id'] },
      { table: 'webhook_endpoints', name: 'webhook_endpoints_deleted', event: 'delete' },
      { table: 'inbox_greetings', name: 'inbox_greetings_added', event: 'insert' },
      { table: 'inbox_greetings', name: 'inbox_greetings_changed', event: 'update', columns: ['enabled', 'inbox_id'] },
      { table: 'inbox_greetings', name: 'inbox_greetings_deleted', event: 'delete' },
    ],
  },
];

function triggerEvent(w: Watched): string {
  return w.event === 'update' ? `update of ${w.columns!.join(', ')}` : w.event;
}

/** The row-level condition: the trigger's own, or "a watched column's value differs". */
function rowChanged(w: Watched, postgres: boolean): string | undefined {
  if (w.event !== 'update') return undefined;
  if (w.when) return w.when;
  return w.columns!.map((c) => (postgres ? `old.${c} is distinct from new.${c}` : `old.${c} is not new.${c}`)).join(' or ');
}

async function dropTriggers(db: Kysely<any>, epoch: string, watched: Watched[]): Promise<void> {
  for (const w of watched) {
    await sql.raw(isPostgres(db) ? `drop trigger ${epoch}_${w.name} on ${w.table}` : `drop trigger ${epoch}_${w.name}`).execute(db);
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  for (const { epoch, watched } of EPOCHS) {
    await dropTriggers(db, epoch, watched);
    if (postgres) {
      await sql
        .raw(
          `create or replace function ${epoch}_bump() returns trigger language plpgsql as $$
          begin
            if current_setting('svc.${epoch}_moved', true) is distinct from 'on' then
              perform set_config('svc.${epoch}_moved', 'on', true);
              update ${epoch} set epoch = epoch + 1 where id = 1;
            end if;
            return null;
          end $$`,
        )
        .execute(db);
    }
    for (const w of watched) {
      const condition = rowChanged(w, postgres);
      const text = postgres
        ? `create trigger ${epoch}_${w.name} after ${triggerEvent(w)} on ${w.table} for each row ${condition ? `when (${condition}) ` : ''}execute function ${epoch}_bump()`
        : `create trigger ${epoch}_${w.name} after ${triggerEvent(w)} on ${w.table} ${condition ? `when ${condition} ` : ''}begin
            update ${epoch} set epoch = epoch + 1 where id = 1;
          end`;
      await sql.raw(text).execute(db);
    }
  }
}

/** Back to the triggers of 0024 and 0026 (statement-level on Postgres, any write of a watched column). */
export async function down(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  for (const { epoch, watched } of EPOCHS) {
    await dropTriggers(db, epoch, watched);
    if (postgres) {
      await sql
        .raw(
          `create or replace function ${epoch}_bump() returns trigger language plpgsql as $$
          begin
            update ${epoch} set epoch = epoch + 1 where id = 1;
            return null;
          end $$`,
        )
        .execute(db);
    }
    for (const w of watched) {
      const text = postgres
        ? `create trigger ${epoch}_${w.name} after ${triggerEvent(w)} on ${w.table} ${w.when ? `for each row when (${w.when})` : 'for each statement'} execute function ${epoch}_bump()`
        : `create trigger ${epoch}_${w.name} after ${triggerEvent(w)} on ${w.table} ${w.when ? `when ${w.when} ` : ''}begin
            update ${epoch} set epoch = epoch + 1 where id = 1;
          end`;
      await sql.raw(text).execute(db);
    }
  }
}
