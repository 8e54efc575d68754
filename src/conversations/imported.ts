// Imported history (the mailbox migration): the reads and writes of conversations, labels and
// messages that the copy and the removal need, taking the caller's transaction (`db`) so a batch
// stays one transaction.
import { type Expression, expressionBuilder, type Insertable, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { ConversationStatus, Database, Db, MessagesTable } from '../db/schema.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import type { ConversationRow } from './format.js';

/** A conversation by id alone (whatever its inbox's state). */
export async function conversationById(db: Db, id: string): Promise<ConversationRow | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Of these conversations, the one with the smallest id. */
export async function firstConversationOf(db: Db, ids: readonly string[]): Promise<ConversationRow | undefined> {
  if (ids.length === 0) return undefined;
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('id', 'in', [...ids])
    .orderBy('id')
    .executeTakeFirst();
}

export async function addConversationLabels(db: Db, conversationId: string, labels: readonly string[]): Promise<void> {
  if (labels.length === 0) return;
  await db
    .insertInto('conversation_labels')
    .values(labels.map((label) => ({ conversation_id: conversationId, label })))
    .onConflict((oc) => oc.columns(['conversation_id', 'label']).doNothing())
    .execute();
}

/** The conversation's newest message (kind message), or with `importedOnly` its newest imported one. */
export async function newestMessage(
  db: Db,
  conversationId: string,
  opts: { importedOnly?: boolean } = {},
): Promise<{ direction: 'in' | 'out'; created_at: string } | undefined> {
  let q = db.selectFrom('messages').select(['direction', 'created_at']).where('conversation_id', '=', conversationId).where('kind', '=', 'message');
  if (opts.importedOnly) q = q.where('imported_at', 'is not', null);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
}

/**
 * The system event marking where imported history ends: the one with these `details` goes, a new
 * one is written at `at` (imported at `importedAt`).
 */
export async function replaceImportDivider(
  db: Db,
  conversation: Pick<ConversationRow, 'id' | 'workspace_id'>,
  divider: { details: string; body: string; at: Date; importedAt: Date },
): Promise<void> {
  await db.deleteFrom('messages').where('conversation_id', '=', conversation.id).where('kind', '=', 'event').where('details', '=', divider.details).execute();
  await db.insertInto('messages').values(importDividerRow(conversation, divider)).execute();
}

/** The row of an "imported history ends here" divider (replaceImportDivider; a conversation a batch creates writes it with its messages). */
export function importDividerRow(
  conversation: Pick<ConversationRow, 'id' | 'workspace_id'>,
  divider: { details: string; body: string; at: Date; importedAt: Date },
): Insertable<MessagesTable> {
  return {
    id: newId('m', divider.at.getTime()),
    workspace_id: conversation.workspace_id,
    conversation_id: conversation.id,
    kind: 'event',
    direction: 'out',
    author_type: 'system',
    author_person_id: null,
    author_key_id: null,
    author_contact_id: null,
    body: divider.body,
    html: null,
    subject: null,
    automatic: 0,
    details: divider.details,
    delivery_status: null,
    delivery_error: null,
    delivery_attempts: 0,
    sent_at: null,
    mail_message_id: null,
    mail_references: null,
    mail_reply_to: null,
    attachments_omitted: 0,
    raw_storage_key: null,
    raw_size: null,
    raw_sha256: null,
    created_at: iso(divider.at),
    imported_at: iso(divider.importedAt),
  };
}

export async function setConversationStatus(db: Db, conversationId: string, status: ConversationStatus, updatedAt: Date): Promise<void> {
  await db
    .updateTable('conversations')
    .set({ status, updated_at: iso(updatedAt) })
    .where('id', '=', conversationId)
    .execute();
}

/** A subquery of conversation ids, e.g. those a migration's threads went into. */
export type ConversationIdQuery = SelectQueryBuilder<Database, any, { conversation_id: string | null }>;

/** The workspace's imported conversations among `candidates` that nobody wrote in (message or note) since the import. */
function unwrittenImported(db: Db, workspaceId: string, candidates: ConversationIdQuery) {
  return db
    .selectFrom('conversations')
    .where('conversations.workspace_id', '=', workspaceId)
    .where('conversations.imported', '=', 1)
    .where('conversations.id', 'in', candidates)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('messages')
            .select(sql`1`.as('one'))
            .whereRef('messages.conversation_id', '=', 'conversations.id')
            .where('messages.kind', 'in', ['message', 'note'])
            .where('messages.imported_at', 'is', null),
        ),
      ),
    );
}

export async function countUnwrittenImported(db: Db, workspaceId: string, candidates: ConversationIdQuery): Promise<number> {
  const row = await unwrittenImported(db, workspaceId, candidates).select(sql<number>`count(*)`.as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The first `limit` ids (in id order) of unwritten imported conversations. */
export async function unwrittenImportedIds(db: Db, workspaceId: string, candidates: ConversationIdQuery, limit: number): Promise<string[]> {
  return (await unwrittenImported(db, workspaceId, candidates).select('conversations.id').orderBy('conversations.id').limit(limit).execute()).map((r) => r.id);
}

/** True when the contact (the column `contactIdColumn` names) has no conversation and wrote no message. */
export function contactHasNoConversationOrMessage(contactIdColumn: string): Expression<SqlBool> {
  const eb = expressionBuilder<Database, never>();
  return eb.and([
    eb.not(eb.exists(eb.selectFrom('conversations').select(sql`1`.as('one')).where('conversations.contact_id', '=', sql.ref<string>(contactIdColumn)))),
    eb.not(eb.exists(eb.selectFrom('messages').select(sql`1`.as('one')).where('messages.author_contact_id', '=', sql.ref<string>(contactIdColumn)))),
  ]);
}
