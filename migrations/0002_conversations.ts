import { type Kysely, sql } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('contacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('attributes', 'text', notNull) // JSON object
    .addColumn('merged_into_id', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('contacts_workspace').on('contacts').columns(['workspace_id', 'id']).execute();
  // Partial indexes: rows without the value (most of them) cost nothing on insert.
  await db.schema.createIndex('contacts_merged_into').on('contacts').column('merged_into_id').where(sql.ref('merged_into_id'), 'is not', null).execute();

  await db.schema
    .createTable('contact_emails')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('email', 'text', notNull)
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('position', 'integer', notNull)
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('contact_emails_pk', ['workspace_id', 'email'])
    .execute();
  await db.schema.createIndex('contact_emails_contact').on('contact_emails').column('contact_id').execute();

  await db.schema
    .createTable('contact_external_ids')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('external_id', 'text', notNull)
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('contact_external_ids_pk', ['inbox_id', 'external_id'])
    .execute();
  await db.schema.createIndex('contact_external_ids_contact').on('contact_external_ids').column('contact_id').execute();

  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id').onDelete('cascade'))
    .addColumn('contact_id', 'text', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('channel_id', 'text', (c) => c.references('channels.id').onDelete('set null'))
    .addColumn('source', 'text', notNull) // email | chat | feedback | api
    .addColumn('status', 'text', notNull) // open | pending | closed
    .addColumn('assignee_id', 'text', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('priority', 'text') // low | medium | high | urgent
    .addColumn('subject', 'text')
    .addColumn('spam', 'integer', notNull)
    .addColumn('imported', 'integer', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addColumn('last_message_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('conversations_workspace').on('conversations').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('conversations_inbox').on('conversations').columns(['inbox_id', 'id']).execute();
  await db.schema.createIndex('conversations_contact').on('conversations').column('contact_id').execute();
  await db.schema.createIndex('conversations_assignee').on('conversations').column('assignee_id').where(sql.ref('assignee_id'), 'is not', null).execute();

  await db.schema
    .createTable('conversation_labels')
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('label', 'text', notNull)
    .addPrimaryKeyConstraint('conversation_labels_pk', ['conversation_id', 'label'])
    .execute();
  await db.schema.createIndex('conversation_labels_label').on('conversation_labels').columns(['label', 'conversation_id']).execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('kind', 'text', notNull) // message | note | event
    .addColumn('direction', 'text', notNull) // in | out
    .addColumn('author_type', 'text', notNull) // contact | member | api_key | system
    .addColumn('author_person_id', 'text', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('author_key_id', 'text')
    .addColumn('author_contact_id', 'text')
    .addColumn('body', 'text', notNull)
    .addColumn('html', 'text')
    .addColumn('subject', 'text')
    .addColumn('automatic', 'integer', notNull)
    .addColumn('details', 'text') // JSON
    .addColumn('delivery_status', 'text') // pending | sent | failed
    .addColumn('delivery_error', 'text')
    .addColumn('delivery_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_at', 'text')
    .addColumn('mail_message_id', 'text')
    .addColumn('mail_references', 'text') // JSON array
    .addColumn('mail_reply_to', 'text')
    .addColumn('attachments_omitted', 'integer', (c) => c.notNull().defaultTo(0))
    // The original .eml of an inbound mail (retention clears these and deletes the file).
    .addColumn('raw_storage_key', 'text')
    .addColumn('raw_size', 'bigint')
    .addColumn('raw_sha256', 'text')
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('messages_conversation').on('messages').columns(['conversation_id', 'id']).execute();
  // Deleting a person clears author_person_id (foreign key): the index keeps that from scanning every message.
  await db.schema.createIndex('messages_author_person').on('messages').column('author_person_id').where(sql.ref('author_person_id'), 'is not', null).execute();

  // Threading index (looked up by workspace and Message-ID) and de-duplication key (one row per
  // Message-ID per inbox; an inbox belongs to one workspace, so the key is unique per inbox).
  // Rows go with their conversation; message_id is not a foreign key (kept light for ingest speed).
  await db.schema
    .createTable('mail_ids')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('rfc_id', 'text', notNull)
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('message_id', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('mail_ids_pk', ['workspace_id', 'rfc_id', 'inbox_id'])
    .execute();
  await db.schema.createIndex('mail_ids_conversation').on('mail_ids').column('conversation_id').execute();

  await db.schema
    .createTable('attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.references('messages.id').onDelete('cascade'))
    .addColumn('filename', 'text', notNull)
    .addColumn('content_type', 'text', notNull)
    .addColumn('size', 'bigint', notNull)
    .addColumn('sha256', 'text', notNull)
    .addColumn('storage_key', 'text', notNull)
    .addColumn('content_id', 'text')
    .addColumn('inline', 'integer', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('attachments_conversation').on('attachments').column('conversation_id').execute();
  await db.schema.createIndex('attachments_message').on('attachments').column('message_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['attachments', 'mail_ids', 'messages', 'conversation_labels', 'conversations', 'contact_external_ids', 'contact_emails', 'contacts']) {
    await db.schema.dropTable(t).execute();
  }
}
