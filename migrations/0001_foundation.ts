import type { Kysely } from 'kysely';
import { notNull, withSequenceKey } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('server_meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', notNull)
    .execute();

  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', notNull)
    .addColumn('origin', 'text', notNull) // bootstrap | signup
    .addColumn('retention_days', 'integer')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('workspaces_name').on('workspaces').column('name').execute();

  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('locale', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('role', 'text', notNull) // owner | admin | agent
    .addColumn('created_at', 'text', notNull)
    .addUniqueConstraint('memberships_workspace_person', ['workspace_id', 'person_id'])
    .execute();
  await db.schema.createIndex('memberships_person').on('memberships').column('person_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', notNull)
    .addColumn('last_used_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('sessions_person').on('sessions').column('person_id').execute();

  await db.schema
    .createTable('sign_in_codes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', notNull)
    .addColumn('code_hash', 'text', notNull)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('sign_in_codes_email').on('sign_in_codes').columns(['email', 'created_at']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', notNull)
    .addColumn('prefix', 'text', notNull)
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', notNull) // JSON array
    .addColumn('inbox_ids', 'text') // JSON array, null = every inbox
    .addColumn('created_at', 'text', notNull)
    .addColumn('last_used_at', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_workspace').on('api_keys').column('workspace_id').execute();

  await db.schema
    .createTable('inboxes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', notNull)
    .addColumn('slug', 'text', notNull)
    .addColumn('locale', 'text', notNull)
    .addColumn('timezone', 'text', notNull)
    .addColumn('mode', 'text', notNull) // live | async
    .addColumn('expected_reply_minutes', 'integer')
    .addColumn('identity_secret_sealed', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addUniqueConstraint('inboxes_workspace_slug', ['workspace_id', 'slug'])
    .execute();

  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('kind', 'text', notNull) // email | chat
    .addColumn('name', 'text', notNull)
    // e-mail channels
    .addColumn('address', 'text', (c) => c.unique())
    .addColumn('display_name', 'text')
    .addColumn('from_address', 'text')
    .addColumn('smtp_host', 'text')
    .addColumn('smtp_port', 'integer')
    .addColumn('smtp_tls', 'text') // starttls | tls | none
    .addColumn('smtp_username', 'text')
    .addColumn('smtp_password_sealed', 'text')
    .addColumn('forwarding_address', 'text', (c) => c.unique())
    // chat channels
    .addColumn('public_key', 'text', (c) => c.unique())
    .addColumn('origins', 'text') // JSON array
    .addColumn('allow_anonymous', 'integer')
    .addColumn('ask_email_offline', 'integer')
    .addColumn('greeting', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('channels_inbox').on('channels').column('inbox_id').execute();

  // Durable background work: a row first, the work second; claimed with a lease.
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', notNull)
    .addColumn('unique_key', 'text', (c) => c.unique())
    .addColumn('payload', 'text', notNull)
    .addColumn('run_at', 'text', notNull)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('jobs_due').on('jobs').columns(['run_at']).execute();

  // The stored event stream behind webhooks, GET /v1/events and the realtime socket.
  await withSequenceKey(db, db.schema.createTable('events'), 'seq')
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('inbox_id', 'text')
    .addColumn('contact_id', 'text')
    .addColumn('type', 'text', notNull)
    .addColumn('occurred_at', 'text', notNull)
    .addColumn('data', 'text', notNull) // JSON
    .addColumn('audience', 'text', notNull) // all | admins
    .addColumn('webhook', 'integer', notNull) // 1 = may be delivered to webhook endpoints
    .addColumn('is_note', 'integer', notNull)
    .execute();
  await db.schema.createIndex('events_workspace_seq').on('events').columns(['workspace_id', 'seq']).execute();
  await db.schema.createIndex('events_occurred').on('events').column('occurred_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['events', 'jobs', 'channels', 'inboxes', 'api_keys', 'sign_in_codes', 'sessions', 'memberships', 'people', 'workspaces', 'server_meta']) {
    await db.schema.dropTable(t).execute();
  }
}
