import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Sign-ins with Google or Microsoft under way for a migration (OAuth authorization code with
  // PKCE): the state's SHA-256, the sealed code verifier, who started it. Single use (deleted by the
  // callback), expiring (expired rows go when the next sign-in starts), gone with the migration.
  await db.schema
    .createTable('migration_sign_ins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('migration_id', 'text', (c) => c.notNull().references('mailbox_migrations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('provider', 'text', notNull)
    .addColumn('username', 'text', notNull)
    .addColumn('verifier_sealed', 'text', notNull)
    .addColumn('created_by_type', 'text', notNull)
    .addColumn('created_by_id', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('migration_sign_ins_migration').on('migration_sign_ins').column('migration_id').execute();
  await db.schema.createIndex('migration_sign_ins_expiry').on('migration_sign_ins').column('expires_at').execute();
  // Gmail through a sign-in copies All Mail once; each message's labels (X-GM-LABELS) are kept here.
  await db.schema.alterTable('mailbox_migration_items').addColumn('gmail_labels', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mailbox_migration_items').dropColumn('gmail_labels').execute();
  await db.schema.dropTable('migration_sign_ins').execute();
}
