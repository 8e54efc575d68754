import { type Kysely, sql } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // Web Push subscriptions of a person's browsers (PushSubscription: endpoint and keys).
  await db.schema
    .createTable('push_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('endpoint', 'text', (c) => c.notNull().unique())
    .addColumn('key_p256dh', 'text', notNull) // base64url, 65-byte uncompressed P-256 point
    .addColumn('key_auth', 'text', notNull) // base64url, 16 bytes
    .addColumn('expires_at', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('push_subscriptions_person').on('push_subscriptions').columns(['person_id', 'id']).execute();

  // WebAuthn credentials (passkeys) of a person: what verifying an assertion needs.
  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique()) // base64url
    .addColumn('public_key', 'text', notNull) // base64url COSE_Key
    .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transports', 'text') // JSON array: usb, nfc, ble, internal, hybrid
    .addColumn('aaguid', 'text')
    .addColumn('backup_eligible', 'integer', notNull)
    .addColumn('backed_up', 'integer', notNull)
    .addColumn('name', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('passkeys_person').on('passkeys').column('person_id').execute();

  // One row per workspace deletion: the job's progress, kept after the workspace row is gone.
  await db.schema
    .createTable('workspace_deletions')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('requested_at', 'text', notNull)
    .addColumn('requested_by', 'text', notNull) // a person id, or "operator"
    .addColumn('conversations_deleted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('files_deleted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('finished_at', 'text')
    .execute();

  // The old clean-up job of webhooks is now rules of the retention job.
  await sql`delete from jobs where kind = 'webhooks.prune'`.execute(db);

  // Retention counts from when a file was stored, and for imported conversations from the import
  // (their own times are the original ones).
  await db.schema.alterTable('messages').addColumn('raw_stored_at', 'text').execute();
  await sql`update messages set raw_stored_at = created_at where raw_storage_key is not null`.execute(db);
  await db.schema.alterTable('conversations').addColumn('imported_at', 'text').execute();
  await sql`update conversations set imported_at = created_at where imported = 1`.execute(db);

  // What the hourly retention job looks for, per workspace.
  await db.schema
    .createIndex('messages_raw_stored')
    .on('messages')
    .columns(['workspace_id', 'raw_stored_at'])
    .where(sql<boolean>`raw_storage_key is not null`)
    .execute();
  await db.schema
    .createIndex('conversations_closed')
    .on('conversations')
    .columns(['workspace_id', 'updated_at'])
    .where(sql<boolean>`status = 'closed'`)
    .execute();
  // Deleting a channel (with its workspace) sets conversations' channel_id to null.
  await db.schema.createIndex('conversations_channel').on('conversations').column('channel_id').where(sql<boolean>`channel_id is not null`).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const i of ['conversations_channel', 'conversations_closed', 'messages_raw_stored']) {
    await db.schema.dropIndex(i).execute();
  }
  await db.schema.alterTable('conversations').dropColumn('imported_at').execute();
  await db.schema.alterTable('messages').dropColumn('raw_stored_at').execute();
  for (const t of ['workspace_deletions', 'passkeys', 'push_subscriptions']) {
    await db.schema.dropTable(t).execute();
  }
}
