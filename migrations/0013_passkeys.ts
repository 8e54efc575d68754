import type { Kysely } from 'kysely';
import { notNull } from '../src/db/dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  // WebAuthn challenges handed out with passkey options: single use (deleted when a response comes
  // back), valid a few minutes, expired ones removed by the retention job.
  await db.schema
    .createTable('passkey_challenges')
    .addColumn('challenge', 'text', (c) => c.primaryKey()) // base64url, random
    .addColumn('purpose', 'text', notNull) // register | sign_in_any | sign_in_person
    // register: the signed-in person; sign_in_person: the person whose address was typed (null when
    // the address has no account: no passkey matches); sign_in_any: null.
    .addColumn('person_id', 'text', (c) => c.references('people.id').onDelete('cascade'))
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('passkey_challenges_expiry').on('passkey_challenges').column('expires_at').execute();
  await db.schema.createIndex('passkey_challenges_person').on('passkey_challenges').column('person_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkey_challenges').execute();
}
