import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// Teams and auto-assignment (issue 36). A team has members and serves inboxes; a conversation may
// belong to a team (`conversations.team_id`) beside its assignee. Auto-assignment is set per team or
// per inbox; a member's availability (away / available; no row: available while online in the
// panel) and the round-robin cursors (one row per workspace, locked by every auto-assignment so two
// processes never assign past a capacity or twice) are their own tables. The settings read for every
// new conversation move the reaction settings epoch (0026/0027), so they are cached per process.
const WATCHED: { table: string; name: string; event: 'insert' | 'delete' | 'update'; columns?: string[] }[] = [
  { table: 'teams', name: 'teams_added', event: 'insert' },
  { table: 'teams', name: 'teams_changed', event: 'update', columns: ['assignment', 'capacity', 'created_at'] },
  { table: 'teams', name: 'teams_deleted', event: 'delete' },
  { table: 'team_inboxes', name: 'team_inboxes_added', event: 'insert' },
  { table: 'team_inboxes', name: 'team_inboxes_deleted', event: 'delete' },
  { table: 'inbox_assignment', name: 'inbox_assignment_added', event: 'insert' },
  { table: 'inbox_assignment', name: 'inbox_assignment_changed', event: 'update', columns: ['assignment', 'capacity'] },
  { table: 'inbox_assignment', name: 'inbox_assignment_deleted', event: 'delete' },
];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('assignment', 'text', (c) => c.notNull())
    .addColumn('capacity', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('teams_workspace_name').on('teams').columns(['workspace_id', 'name_key']).unique().execute();
  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'person_id'])
    .execute();
  await db.schema.createIndex('team_members_person').on('team_members').columns(['workspace_id', 'person_id']).execute();
  await db.schema
    .createTable('team_inboxes')
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_inboxes_pk', ['team_id', 'inbox_id'])
    .execute();
  await db.schema.createIndex('team_inboxes_inbox').on('team_inboxes').column('inbox_id').execute();
  await db.schema
    .createTable('inbox_assignment')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('assignment', 'text', (c) => c.notNull())
    .addColumn('capacity', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('member_availability')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('member_availability_pk', ['workspace_id', 'person_id'])
    .execute();
  await db.schema
    .createTable('assignment_cursors')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('cursors', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('conversations').addColumn('team_id', 'text').execute();
  await db.schema.createIndex('conversations_team').on('conversations').columns(['workspace_id', 'team_id', 'status']).execute();

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
  await db.schema.dropIndex('conversations_team').execute();
  await db.schema.alterTable('conversations').dropColumn('team_id').execute();
  for (const t of ['assignment_cursors', 'member_availability', 'inbox_assignment', 'team_inboxes', 'team_members', 'teams'])
    await db.schema.dropTable(t).execute();
}
