import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../src/db/dialect.js';

// Custom fields (issue 37): typed fields a workspace defines for conversations and contacts, and
// their values. A value is a row with typed columns (text, number) so that a list filter is an
// indexed lookup on both dialects, not a scan of JSON; a multi-select keeps one row per option, so
// "contains" is the same lookup. The definitions are read for every event (webhook data shows the
// values), so their changes move the reaction settings epoch (0026/0027) and they are cached.
const WATCHED: { name: string; event: 'insert' | 'delete' | 'update' }[] = [
  { name: 'custom_fields_added', event: 'insert' },
  { name: 'custom_fields_changed', event: 'update' },
  { name: 'custom_fields_deleted', event: 'delete' },
];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('custom_fields')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('object', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('options', 'text')
    .addColumn('required_before_closing', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('custom_fields_key').on('custom_fields').columns(['workspace_id', 'object', 'key']).unique().execute();
  await db.schema
    .createTable('custom_field_values')
    .addColumn('field_id', 'text', (c) => c.notNull().references('custom_fields.id').onDelete('cascade'))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('item', 'integer', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('value_text', 'text')
    .addColumn('value_number', 'double precision')
    .addPrimaryKeyConstraint('custom_field_values_pk', ['field_id', 'owner_id', 'item'])
    .execute();
  // The values of a conversation or contact (shown with it, removed with it).
  await db.schema.createIndex('custom_field_values_owner').on('custom_field_values').column('owner_id').execute();
  // The list filters: equality on a field's text or number value.
  await db.schema.createIndex('custom_field_values_text').on('custom_field_values').columns(['field_id', 'value_text', 'owner_id']).execute();
  await db.schema.createIndex('custom_field_values_number').on('custom_field_values').columns(['field_id', 'value_number', 'owner_id']).execute();

  const postgres = isPostgres(db);
  for (const w of WATCHED) {
    const text = postgres
      ? `create trigger reaction_settings_epoch_${w.name} after ${w.event} on custom_fields for each row execute function reaction_settings_epoch_bump()`
      : `create trigger reaction_settings_epoch_${w.name} after ${w.event} on custom_fields begin
          update reaction_settings_epoch set epoch = epoch + 1 where id = 1;
        end`;
    await sql.raw(text).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  for (const w of WATCHED)
    await sql.raw(postgres ? `drop trigger reaction_settings_epoch_${w.name} on custom_fields` : `drop trigger reaction_settings_epoch_${w.name}`).execute(db);
  await db.schema.dropTable('custom_field_values').execute();
  await db.schema.dropTable('custom_fields').execute();
}
