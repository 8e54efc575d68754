import type { Kysely } from 'kysely';

// SLA (issue 35): targets per inbox and priority ('' = the inbox's default), each conversation's
// SLA state (JSON, src/sla/engine.ts) with its earliest open due time for the "due first" order
// (a far-future sentinel when nothing is due, so one index serves both dialects without NULL
// ordering differences), the outcome of every target (met in time or breached) for reports, and
// business-hours durations beside the calendar ones in report_durations.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('inbox_sla_policies')
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('priority', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('first_response_minutes', 'integer')
    .addColumn('next_response_minutes', 'integer')
    .addColumn('resolution_minutes', 'integer')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('inbox_sla_policies_pk', ['inbox_id', 'priority'])
    .execute();
  await db.schema.createIndex('inbox_sla_policies_workspace').on('inbox_sla_policies').column('workspace_id').execute();

  await db.schema.alterTable('conversations').addColumn('sla', 'text').execute();
  await db.schema
    .alterTable('conversations')
    .addColumn('sla_due_at', 'text', (c) => c.notNull().defaultTo('9999-12-31T23:59:59.999Z'))
    .execute();
  await db.schema.createIndex('conversations_sla_due').on('conversations').columns(['workspace_id', 'status', 'sla_due_at', 'id']).execute();

  await db.schema
    .createTable('sla_outcomes')
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('inbox_id', 'text', (c) => c.notNull())
    .addColumn('member_id', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('sla_outcomes_pk', ['conversation_id', 'target', 'due_at'])
    .execute();
  await db.schema.createIndex('sla_outcomes_report').on('sla_outcomes').columns(['workspace_id', 'day']).execute();

  await db.schema.alterTable('report_durations').addColumn('business_seconds', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('report_durations').dropColumn('business_seconds').execute();
  await db.schema.dropTable('sla_outcomes').execute();
  await db.schema.dropIndex('conversations_sla_due').execute();
  await db.schema.alterTable('conversations').dropColumn('sla_due_at').execute();
  await db.schema.alterTable('conversations').dropColumn('sla').execute();
  await db.schema.dropTable('inbox_sla_policies').execute();
}
