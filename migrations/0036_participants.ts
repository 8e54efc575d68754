import type { Kysely } from 'kysely';

// Mail work as in a mail client (issue 33): an e-mail conversation's participants (JSON list of
// {name, address, role: to|cc}; null for conversations that never had any recorded) and the Bcc a
// reply went to (JSON list of addresses, kept apart from mail_headers so that it never reaches
// events or webhooks).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('participants', 'text').execute();
  await db.schema.alterTable('messages').addColumn('mail_bcc', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('mail_bcc').execute();
  await db.schema.alterTable('conversations').dropColumn('participants').execute();
}
