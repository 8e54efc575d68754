import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // A visitor's session in a chat widget (or an SDK), addressed by the channel's public key.
  await db.schema
    .createTable('contact_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('contact_id', 'text', notNull)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('verified', 'integer', notNull) // 1 = identity proven with the inbox identity secret
    .addColumn('created_at', 'text', notNull)
    .addColumn('last_used_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('contact_sessions_expires').on('contact_sessions').column('expires_at').execute();
  await db.schema.createIndex('contact_sessions_workspace').on('contact_sessions').column('workspace_id').execute();

  // Conversations an unverified session started: the only ones it may read.
  await db.schema
    .createTable('contact_session_conversations')
    .addColumn('session_id', 'text', (c) => c.notNull().references('contact_sessions.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text', notNull)
    .addPrimaryKeyConstraint('contact_session_conversations_pk', ['session_id', 'conversation_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contact_session_conversations').execute();
  await db.schema.dropTable('contact_sessions').execute();
}
