import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// What a new mail's transaction reads besides the mail itself — the team's own addresses (members'
// addresses and the e-mail channels' addresses), the inbox's SLA policies and whether its away reply
// is on — rarely changes, so their changes move the reaction settings epoch (0026/0027) too and the
// answers are cached per process like the other reaction settings (src/events/settings-cache.ts).
const WATCHED: { table: string; name: string; event: 'insert' | 'delete' | 'update'; columns?: string[] }[] = [
  { table: 'memberships', name: 'memberships_added', event: 'insert' },
  { table: 'memberships', name: 'memberships_changed', event: 'update', columns: ['person_id', 'workspace_id'] },
  { table: 'memberships', name: 'memberships_deleted', event: 'delete' },
  { table: 'people', name: 'people_changed', event: 'update', columns: ['email'] },
  { table: 'people', name: 'people_deleted', event: 'delete' },
  { table: 'channels', name: 'channels_added', event: 'insert' },
  { table: 'channels', name: 'channels_changed', event: 'update', columns: ['address', 'from_address', 'forwarding_address', 'kind', 'workspace_id'] },
  { table: 'channels', name: 'channels_deleted', event: 'delete' },
  { table: 'inbox_sla_policies', name: 'inbox_sla_policies_added', event: 'insert' },
  {
    table: 'inbox_sla_policies',
    name: 'inbox_sla_policies_changed',
    event: 'update',
    columns: ['inbox_id', 'priority', 'first_response_minutes', 'next_response_minutes', 'resolution_minutes'],
  },
  { table: 'inbox_sla_policies', name: 'inbox_sla_policies_deleted', event: 'delete' },
  { table: 'inbox_away_replies', name: 'inbox_away_replies_added', event: 'insert' },
  { table: 'inbox_away_replies', name: 'inbox_away_replies_changed', event: 'update', columns: ['enabled', 'inbox_id'] },
  { table: 'inbox_away_replies', name: 'inbox_away_replies_deleted', event: 'delete' },
];

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  for (const w of WATCHED) {
    const event = w.event === 'update' ? `update of ${w.columns!.join(', ')}` : w.event;
    const changed = w.columns?.map((c) => (postgres ? `old.${c} is distinct from new.${c}` : `old.${c} is not new.${c}`)).join(' or ');
    const text = postgres
      ? `create trigger reaction_settings_epoch_${w.name} after ${event} on ${w.table} for each row ${changed ? `when (${changed}) ` : ''}execute function reaction_settings_epoch_bump()`
      : `create trigger reaction_settings_epoch_${w.name} after ${event} on ${w.table} ${changed ? `when ${changed} ` : ''}begin
          update reaction_settings_epoch set epoch = epoch + 1 where id = 1;
        end`;
    await sql.raw(text).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  for (const w of WATCHED) {
    await sql.raw(postgres ? `drop trigger reaction_settings_epoch_${w.name} on ${w.table}` : `drop trigger reaction_settings_epoch_${w.name}`).execute(db);
  }
}
