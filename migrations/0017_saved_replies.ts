import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Saved replies: workspace ones (owner_key '') for every member, personal ones (owner_key = the
  // person) for their owner only. Names are unique per owner, ignoring case (name_key).
  await db.schema
    .createTable('saved_replies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('scope', 'text', notNull) // workspace | personal
    .addColumn('owner_id', 'text', (c) => c.references('people.id').onDelete('cascade'))
    .addColumn('owner_key', 'text', notNull)
    .addColumn('name', 'text', notNull)
    .addColumn('name_key', 'text', notNull)
    .addColumn('body', 'text', notNull)
    .addColumn('search_text', 'text', notNull) // lower-cased name and body, for the # picker
    .addColumn('created_by', 'text', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('saved_replies_name').on('saved_replies').columns(['workspace_id', 'owner_key', 'name_key']).unique().execute();
  await db.schema.createIndex('saved_replies_owner').on('saved_replies').column('owner_id').execute();

  // Signatures appended to e-mail replies: one per member of a workspace, one per inbox.
  await db.schema
    .createTable('member_signatures')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('body', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addPrimaryKeyConstraint('member_signatures_pk', ['workspace_id', 'person_id'])
    .execute();
  await db.schema.createIndex('member_signatures_person').on('member_signatures').column('person_id').execute();
  await db.schema
    .createTable('inbox_signatures')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('body', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('inbox_signatures_workspace').on('inbox_signatures').column('workspace_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('inbox_signatures').execute();
  await db.schema.dropTable('member_signatures').execute();
  await db.schema.dropTable('saved_replies').execute();
}
