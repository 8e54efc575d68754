// The widget's reads of a visitor's conversations, messages and files (src/widget decides which
// conversations a visitor may see; these only read).
import type { Db } from '../db/schema.js';
import type { AttachmentRow, ConversationRow, MessageRow } from './format.js';

/** Ids of the contact's conversations in the inbox, those imported from an old mailbox left out. */
export async function contactConversationIdsInInbox(db: Db, target: { workspaceId: string; inboxId: string; contactId: string }): Promise<string[]> {
  const rows = await db
    .selectFrom('conversations')
    .select('id')
    .where('workspace_id', '=', target.workspaceId)
    .where('inbox_id', '=', target.inboxId)
    .where('contact_id', '=', target.contactId)
    .where('imported', '=', 0)
    .execute();
  return rows.map((r) => r.id);
}

/** These conversations, latest message first, at most `limit`. */
export async function conversationsByLastMessage(db: Db, ids: readonly string[], limit: number): Promise<ConversationRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('id', 'in', [...ids])
    .orderBy('last_message_at', 'desc')
    .limit(limit)
    .execute();
}

/** Each conversation's latest message (kind message: no notes nor events), by conversation id. */
export async function latestSentMessages(db: Db, ids: readonly string[]): Promise<Map<string, Pick<MessageRow, 'body' | 'author_type'>>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('messages as m')
    .select(['m.conversation_id', 'm.body', 'm.author_type'])
    .where('m.conversation_id', 'in', [...ids])
    .where('m.id', '=', (eb) =>
      eb
        .selectFrom('messages as later')
        .select((l) => l.fn.max('later.id').as('id'))
        .whereRef('later.conversation_id', '=', 'm.conversation_id')
        .where('later.kind', '=', 'message')
        .where('later.forwarded_message_id', 'is', null),
    )
    .execute();
  return new Map(rows.map((r) => [r.conversation_id, r]));
}

/** The conversation's messages (kind message: no notes, events nor forwards) after the id `after`, oldest first. */
export async function sentMessagesOf(db: Db, conversationId: string, opts: { after?: string; limit: number }): Promise<MessageRow[]> {
  // Forwards went to someone else: the visitor never sees them.
  let q = db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'message')
    .where('forwarded_message_id', 'is', null);
  if (opts.after) q = q.where('id', '>', opts.after);
  return q.orderBy('id', 'asc').limit(opts.limit).execute();
}

/** An attachment of the workspace that belongs to a message (not a note, nor an upload not sent yet). */
export async function attachmentOfSentMessage(db: Db, workspaceId: string, attachmentId: string): Promise<AttachmentRow | undefined> {
  return db
    .selectFrom('attachments')
    .innerJoin('messages', 'messages.id', 'attachments.message_id')
    .selectAll('attachments')
    .where('attachments.workspace_id', '=', workspaceId)
    .where('attachments.id', '=', attachmentId)
    .where('messages.kind', '=', 'message')
    .where('messages.forwarded_message_id', 'is', null)
    .executeTakeFirst();
}
