import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // An agent may be limited to some inboxes (JSON array; null = every inbox), and the panel shows
  // when a member was last seen in the workspace.
  await db.schema.alterTable('memberships').addColumn('inbox_ids', 'text').execute();
  await db.schema.alterTable('memberships').addColumn('last_seen_at', 'text').execute();
  // Which browser a session belongs to, so a person can tell their sessions apart.
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();

  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('email', 'text', notNull)
    .addColumn('role', 'text', notNull) // owner | admin | agent
    .addColumn('inbox_ids', 'text') // JSON array, agents only
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text') // person id (no foreign key: the invite outlives its author)
    .addColumn('created_at', 'text', notNull)
    .addColumn('sent_at', 'text')
    .addColumn('expires_at', 'text', notNull)
    .addColumn('accepted_at', 'text')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('invites_workspace').on('invites').columns(['workspace_id', 'email']).execute();

  // One-time sign-in links made by the operator (svc bootstrap, svc person sign-in-link).
  await db.schema
    .createTable('sign_in_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('sign_in_links_person').on('sign_in_links').column('person_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sign_in_links').execute();
  await db.schema.dropTable('invites').execute();
  await db.schema.alterTable('sessions').dropColumn('user_agent').execute();
  await db.schema.alterTable('memberships').dropColumn('last_seen_at').execute();
  await db.schema.alterTable('memberships').dropColumn('inbox_ids').execute();
}
