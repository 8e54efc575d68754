import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

// Mail identity: the headers an e-mail message was received or sent with (shown as `email` in the
// API), and the de-duplication of inbound mail by what the message is (a digest of its normalised
// Message-ID, Date, From, To, Subject and body) rather than by its Message-ID alone.
export async function up(db: Kysely<any>): Promise<void> {
  // JSON: {message_id, in_reply_to, references, from, to, cc, subject}; null for other messages.
  await db.schema.alterTable('messages').addColumn('mail_headers', 'text').execute();
  // The digest of the message that registered the Message-ID; null for mail we sent and for rows
  // from before this migration (then any mail with that Message-ID counts as the same message).
  await db.schema.alterTable('mail_ids').addColumn('digest', 'text').execute();
  // Every stored inbound or imported mail, once per inbox.
  await db.schema
    .createTable('mail_digests')
    .addColumn('workspace_id', 'text', notNull)
    .addColumn('inbox_id', 'text', notNull)
    .addColumn('digest', 'text', notNull)
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('message_id', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addPrimaryKeyConstraint('mail_digests_pk', ['workspace_id', 'inbox_id', 'digest'])
    .execute();
  await db.schema.createIndex('mail_digests_conversation').on('mail_digests').column('conversation_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mail_digests').execute();
  await db.schema.alterTable('mail_ids').dropColumn('digest').execute();
  await db.schema.alterTable('messages').dropColumn('mail_headers').execute();
}
