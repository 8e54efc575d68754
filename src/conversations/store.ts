// Queries of conversations, labels, messages and attachments shared by the services.
import { inboxIsDeleted } from '../inboxes/store.js';
import type { Db } from '../db/schema.js';
import type { AttachmentRow, ConversationRow, MessageRow } from './format.js';

/** A conversation of the workspace; those of a deleted inbox (waiting for the deletion job) are not found. */
export async function findConversation(db: Db, workspaceId: string, id: string): Promise<ConversationRow | undefined> {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where((eb) => eb.not(inboxIsDeleted('conversations.inbox_id')))
    .executeTakeFirst();
}

/** The contact's conversations (those of deleted inboxes too), oldest first. */
export async function conversationsOfContact(db: Db, contactId: string): Promise<ConversationRow[]> {
  return db.selectFrom('conversations').selectAll().where('contact_id', '=', contactId).orderBy('id').execute();
}

/** The inboxes the contact has conversations in. */
export async function inboxIdsOfContactConversations(db: Db, contactId: string): Promise<string[]> {
  return (await db.selectFrom('conversations').select('inbox_id').distinct().where('contact_id', '=', contactId).execute()).map((r) => r.inbox_id);
}

/** The ids of the contacts' conversations (those of deleted inboxes too). */
export async function conversationIdsOfContacts(db: Db, contactIds: readonly string[]): Promise<string[]> {
  if (contactIds.length === 0) return [];
  return (await db.selectFrom('conversations').select('id').where('contact_id', 'in', contactIds).execute()).map((r) => r.id);
}

export async function labelsOf(db: Db, conversationIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const id of conversationIds) out.set(id, []);
  if (conversationIds.length === 0) return out;
  const rows = await db
    .selectFrom('conversation_labels')
    .select(['conversation_id', 'label'])
    .where('conversation_id', 'in', [...new Set(conversationIds)])
    .orderBy('label')
    .execute();
  for (const r of rows) out.get(r.conversation_id)?.push(r.label);
  return out;
}

export async function attachmentsOf(db: Db, messageIds: readonly string[]): Promise<Map<string, AttachmentRow[]>> {
  const out = new Map<string, AttachmentRow[]>();
  for (const id of messageIds) out.set(id, []);
  if (messageIds.length === 0) return out;
  const rows = await db.selectFrom('attachments').selectAll().where('message_id', 'in', [...new Set(messageIds)]).orderBy('id').execute();
  for (const r of rows) out.get(r.message_id!)?.push(r);
  return out;
}

export async function findMessage(db: Db, conversationId: string, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).where('id', '=', id).executeTakeFirst();
}

/** The first message of a conversation (what started it). */
export async function firstMessage(db: Db, conversationId: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).where('kind', '=', 'message').orderBy('id').limit(1).executeTakeFirst();
}

/** The latest change of a conversation (its newest 'event' message: what changed and who changed it). */
export async function latestChange(db: Db, conversationId: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).where('kind', '=', 'event').orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/** Whether the team answered the conversation before this message (replies by members or keys; automatic mail aside). */
export async function teamRepliedBefore(db: Db, conversationId: string, messageId: string): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'message')
    .where('direction', '=', 'out')
    .where('automatic', '=', 0)
    .where('author_type', 'in', ['member', 'api_key'])
    .where('id', '<', messageId)
    .limit(1)
    .executeTakeFirst();
  return !!row;
}

/** Who closed the conversation in its latest change, when that change closed it (for reactions to conversation.updated). */
export async function closedInLatestChange(db: Db, conversationId: string): Promise<{ authorType: MessageRow['author_type']; personId: string | null; at: string } | undefined> {
  const change = await latestChange(db, conversationId);
  if (!change?.details) return undefined;
  const details = JSON.parse(change.details) as { changes?: { status?: { to?: unknown } } };
  if (details.changes?.status?.to !== 'closed') return undefined;
  return { authorType: change.author_type, personId: change.author_person_id, at: change.created_at };
}
