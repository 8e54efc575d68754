import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // An e-mail channel's sign-in with Google or Microsoft (issue 38): the grant (refresh token, the
  // current access token and its expiry) sealed under the master key as one JSON text, the account
  // it signed in as, and whether the provider still accepts it (revoked: its words are kept).
  // One grant per channel, used for sending (SMTP XOAUTH2) and for reading the mailbox (IMAP).
  await db.schema
    .createTable('channel_grants')
    .addColumn('channel_id', 'text', (c) => c.primaryKey().references('channels.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('provider', 'text', notNull)
    .addColumn('account', 'text', notNull)
    .addColumn('grant_sealed', 'text', notNull)
    .addColumn('access_expires_at', 'text')
    .addColumn('state', 'text', notNull)
    .addColumn('error', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('told_at', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('channel_grants_workspace').on('channel_grants').column('workspace_id').execute();
  // Sign-ins under way for a channel (authorization code with PKCE), like migration_sign_ins:
  // single use, expiring, gone with the channel.
  await db.schema
    .createTable('channel_sign_ins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('provider', 'text', notNull)
    .addColumn('username', 'text', notNull)
    .addColumn('verifier_sealed', 'text', notNull)
    .addColumn('created_by_type', 'text', notNull)
    .addColumn('created_by_id', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('channel_sign_ins_channel').on('channel_sign_ins').column('channel_id').execute();
  await db.schema.createIndex('channel_sign_ins_expiry').on('channel_sign_ins').column('expires_at').execute();
  // How the channel's outgoing SMTP account signs in: password (the smtp_* columns), google or microsoft.
  await db.schema
    .alterTable('channels')
    .addColumn('smtp_auth', 'text', (c) => c.notNull().defaultTo('password'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('channels').dropColumn('smtp_auth').execute();
  await db.schema.dropTable('channel_sign_ins').execute();
  await db.schema.dropTable('channel_grants').execute();
}
