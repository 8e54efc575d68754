import type { Kysely } from 'kysely';

// An address a widget visitor typed without proof (issue 32): kept on the contact for the team to
// see and confirm or merge, never used to find a contact or to send mail.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('contacts').addColumn('unverified_email', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('contacts').dropColumn('unverified_email').execute();
}
