import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Contacts CSV import and segments (issue 37). An import is a stored job's state: the uploaded file,
// the chosen column mapping and the progress (rows done, created, updated, per-row errors), written
// in the same transaction as each batch of contacts, so a restart resumes where the last commit
// ended. A segment is a saved contact-list filter; a broadcast may name one as its audience
// (resolved into recipients when sending starts: segment_resolved_at).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('contact_imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('created_by', 'text')
    .addColumn('state', 'text', notNull)
    .addColumn('file_key', 'text')
    .addColumn('filename', 'text')
    .addColumn('encoding', 'text', notNull)
    .addColumn('bytes', 'integer', notNull)
    .addColumn('columns', 'text', notNull)
    .addColumn('delimiter', 'text', notNull)
    .addColumn('mapping', 'text')
    .addColumn('rows_total', 'integer', notNull)
    .addColumn('rows_done', 'integer', notNull)
    .addColumn('created_count', 'integer', notNull)
    .addColumn('updated_count', 'integer', notNull)
    .addColumn('unchanged_count', 'integer', notNull)
    .addColumn('error_count', 'integer', notNull)
    .addColumn('errors', 'text', notNull)
    .addColumn('failure', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('contact_imports_workspace').on('contact_imports').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('contact_imports_state').on('contact_imports').columns(['state', 'updated_at']).execute();

  await db.schema
    .createTable('contact_segments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', notNull)
    .addColumn('filter', 'text', notNull)
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('contact_segments_workspace').on('contact_segments').columns(['workspace_id', 'id']).execute();

  await db.schema.alterTable('broadcasts').addColumn('segment_id', 'text').execute();
  await db.schema.alterTable('broadcasts').addColumn('segment_resolved_at', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('broadcasts').dropColumn('segment_resolved_at').execute();
  await db.schema.alterTable('broadcasts').dropColumn('segment_id').execute();
  await db.schema.dropTable('contact_segments').execute();
  await db.schema.dropTable('contact_imports').execute();
}
