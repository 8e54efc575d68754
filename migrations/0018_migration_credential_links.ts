import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Links to the panel page where a person enters a migration's mailbox password (an assistant
  // hands them out instead of ever seeing the password): single use, expiring, bound to one
  // migration; only the SHA-256 of the token is stored. Expired and used ones are removed by the
  // retention job; they go with their migration (cascade).
  await db.schema
    .createTable('migration_credential_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by_type', 'text', notNull) // member | api_key
    .addColumn('created_by_id', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('migration_credential_links_migration').on('migration_credential_links').column('migration_id').execute();
  await db.schema.createIndex('migration_credential_links_expiry').on('migration_credential_links').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('migration_credential_links').execute();
}
