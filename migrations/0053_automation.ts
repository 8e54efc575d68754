import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// Automation rules, their run log and macros (issue 36). A workspace's enabled rules are read for
// every event (their triggers) and every run (the whole rules), so any change to a rule moves the
// reaction settings epoch (0026/0027) and both are cached per process. `automation_replies_sent`
// holds one row per rule and conversation whose saved reply went out: the primary key makes "at
// most once" hold in the database. A run-log row's `run_key` (event and rule, or the timer) is
// unique: a job run again after a crash finds its rows and repeats nothing.
const WATCHED: { name: string; event: 'insert' | 'delete' | 'update'; columns?: string[] }[] = [
  { name: 'automation_rules_added', event: 'insert' },
  { name: 'automation_rules_changed', event: 'update', columns: ['enabled', 'trigger_type', 'trigger', 'conditions', 'actions', 'name', 'position'] },
  { name: 'automation_rules_deleted', event: 'delete' },
];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('automation_rules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('trigger_type', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('conditions', 'text', (c) => c.notNull())
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_run_at', 'text')
    .execute();
  await db.schema.createIndex('automation_rules_workspace').on('automation_rules').columns(['workspace_id', 'position']).execute();
  await db.schema
    .createTable('automation_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('rule_id', 'text', (c) => c.notNull())
    .addColumn('rule_name', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('run_key', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automation_runs_workspace').on('automation_runs').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('automation_runs_rule').on('automation_runs').columns(['rule_id', 'id']).execute();
  await db.schema.createIndex('automation_runs_conversation').on('automation_runs').columns(['conversation_id', 'id']).execute();
  await db.schema.createIndex('automation_runs_created').on('automation_runs').column('created_at').execute();
  await db.schema
    .createTable('automation_replies_sent')
    .addColumn('rule_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('automation_replies_sent_pk', ['rule_id', 'conversation_id'])
    .execute();
  await db.schema.createIndex('automation_replies_sent_conversation').on('automation_replies_sent').column('conversation_id').execute();
  await db.schema
    .createTable('macros')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('shared', 'integer', (c) => c.notNull())
    .addColumn('owner_person_id', 'text')
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('macros_workspace').on('macros').columns(['workspace_id', 'name']).execute();

  const postgres = isPostgres(db);
  for (const w of WATCHED) {
    const event = w.event === 'update' ? `update of ${w.columns!.join(', ')}` : w.event;
    const changed = w.columns?.map((c) => (postgres ? `old.${c} is distinct from new.${c}` : `old.${c} is not new.${c}`)).join(' or ');
    const text = postgres
      ? `create trigger reaction_settings_epoch_${w.name} after ${event} on automation_rules for each row ${changed ? `when (${changed}) ` : ''}execute function reaction_settings_epoch_bump()`
      : `create trigger reaction_settings_epoch_${w.name} after ${event} on automation_rules ${changed ? `when ${changed} ` : ''}begin
          update reaction_settings_epoch set epoch = epoch + 1 where id = 1;
        end`;
    await sql.raw(text).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  for (const w of WATCHED)
    await sql
      .raw(postgres ? `drop trigger reaction_settings_epoch_${w.name} on automation_rules` : `drop trigger reaction_settings_epoch_${w.name}`)
      .execute(db);
  for (const t of ['macros', 'automation_replies_sent', 'automation_runs', 'automation_rules']) await db.schema.dropTable(t).execute();
}
