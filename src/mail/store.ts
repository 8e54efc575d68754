// Message-IDs (mail_ids) and digests (mail_digests) for other features: conversations register
// the ids of their messages and delete them with their conversations through these. Imports no
// feature, so any may use it.
import type { Insertable } from 'kysely';
import { reusableInsert } from '../db/reusable-query.js';
import type { Db, MailIdsTable } from '../db/schema.js';

/** Stores a Message-ID for threading; false when the inbox holds it already. */
export async function insertMailId(db: Db, row: Insertable<MailIdsTable>): Promise<boolean> {
  return (await insertMailIdRow(db, row)) === 1;
}

const insertMailIdRow = reusableInsert('mail_ids', (q) => q.onConflict((oc) => oc.columns(['workspace_id', 'rfc_id', 'inbox_id']).doNothing()));

/** Deletes the Message-IDs and digests of these conversations (at most a few hundred per call). */
export async function deleteMailOfConversations(db: Db, conversationIds: readonly string[]): Promise<void> {
  if (conversationIds.length === 0) return;
  await db
    .deleteFrom('mail_ids')
    .where('conversation_id', 'in', [...conversationIds])
    .execute();
  await db
    .deleteFrom('mail_digests')
    .where('conversation_id', 'in', [...conversationIds])
    .execute();
}

/** Message-IDs for threading, many at once; answers the ids this wrote (one already held is left as it is). */
export async function insertMailIds(db: Db, rows: readonly Insertable<MailIdsTable>[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const written = await db
    .insertInto('mail_ids')
    .values([...rows])
    .onConflict((oc) => oc.columns(['workspace_id', 'rfc_id', 'inbox_id']).doNothing())
    .returning('rfc_id')
    .execute();
  return new Set(written.map((r) => r.rfc_id));
}

/** Forgets the Message-ID of a message that is never sent (a cancelled scheduled message). */
export async function deleteMailIdOfMessage(db: Db, messageId: string): Promise<void> {
  await db.deleteFrom('mail_ids').where('message_id', '=', messageId).execute();
}
