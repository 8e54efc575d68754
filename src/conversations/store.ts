// Queries of conversations, labels, messages and attachments shared by the services.

import type { ExpressionBuilder } from 'kysely';
import type { Database, Db } from '../db/schema.js';
import { inboxIsDeleted } from '../inboxes/store.js';
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
  return groupedBy(
    conversationIds,
    (ids) => db.selectFrom('conversation_labels').select(['conversation_id', 'label']).where('conversation_id', 'in', ids).orderBy('label').execute(),
    (r) => [r.conversation_id, r.label],
  );
}

export async function attachmentsOf(db: Db, messageIds: readonly string[]): Promise<Map<string, AttachmentRow[]>> {
  return groupedBy(
    messageIds,
    (ids) => db.selectFrom('attachments').selectAll().where('message_id', 'in', ids).orderBy('id').execute(),
    (r) => [r.message_id!, r],
  );
}

/** What `load` finds for each id (read once for all of them), in its order; an id with nothing has an empty list. */
async function groupedBy<R, V>(ids: readonly string[], load: (ids: string[]) => Promise<R[]>, entry: (r: R) => [string, V]): Promise<Map<string, V[]>> {
  const out = new Map<string, V[]>();
  for (const id of ids) out.set(id, []);
  if (ids.length === 0) return out;
  for (const r of await load([...new Set(ids)])) {
    const [id, value] = entry(r);
    out.get(id)?.push(value);
  }
  return out;
}

export async function findMessage(db: Db, conversationId: string, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('conversation_id', '=', conversationId).where('id', '=', id).executeTakeFirst();
}

/** The first message of a conversation (what started it). */
export async function firstMessage(db: Db, conversationId: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'message')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** The customer's newest message of a conversation (what automation conditions read when no message started the run). */
export async function latestCustomerMessage(db: Db, conversationId: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'message')
    .where('direction', '=', 'in')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Whether a change after `since` touched one of these fields (automation timers re-check that a state lasted). */
export async function changedSince(db: Db, conversationId: string, since: string, fields: readonly string[]): Promise<boolean> {
  const rows = await db
    .selectFrom('messages')
    .select('details')
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'event')
    .where('created_at', '>', since)
    .execute();
  return rows.some((r) => {
    const changes = (JSON.parse(r.details ?? '{}') as { changes?: Record<string, unknown> }).changes ?? {};
    return fields.some((f) => f in changes);
  });
}

/** Whether anyone wrote (customer or team, automatic mail aside) after `since`. */
export async function wroteSince(db: Db, conversationId: string, since: string): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'message')
    .where('automatic', '=', 0)
    .where('created_at', '>', since)
    .limit(1)
    .executeTakeFirst();
  return !!row;
}

/** Live conversations (not imported, spam, merged or in a deleted inbox) created since `since`, newest first (the automation dry run). */
export async function conversationsCreatedSince(db: Db, workspaceId: string, since: Date, limit: number): Promise<ConversationRow[]> {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('created_at', '>=', since.toISOString())
    .where('imported', '=', 0)
    .where('spam', '=', 0)
    .where('merged_into_id', 'is', null)
    .where((eb) => eb.not(inboxIsDeleted('conversations.inbox_id')))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The latest change of a conversation (its newest 'event' message: what changed and who changed it). */
export async function latestChange(db: Db, conversationId: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('conversation_id', '=', conversationId)
    .where('kind', '=', 'event')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
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
export async function closedInLatestChange(
  db: Db,
  conversationId: string,
): Promise<{ authorType: MessageRow['author_type']; personId: string | null; at: string } | undefined> {
  const change = await latestChange(db, conversationId);
  if (!change?.details) return undefined;
  const details = JSON.parse(change.details) as { changes?: { status?: { to?: unknown } } };
  if (details.changes?.status?.to !== 'closed') return undefined;
  return { authorType: change.author_type, personId: change.author_person_id, at: change.created_at };
}

/** The workspace's conversations assigned to the person that are not closed, oldest first. */
export async function openConversationsAssignedTo(db: Db, workspaceId: string, personId: string): Promise<ConversationRow[]> {
  return db
    .selectFrom('conversations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('assignee_id', '=', personId)
    .where('status', '!=', 'closed')
    .orderBy('id')
    .execute();
}

/**
 * Account deletion: the person's messages stay without an author and their conversations become
 * unassigned (no events: the account is gone, not a change a member made). Here rather than in
 * service.ts so that people/ calls it without an import cycle.
 */
export async function forgetPersonInConversations(db: Db, personId: string): Promise<void> {
  await db.updateTable('messages').set({ author_person_id: null }).where('author_person_id', '=', personId).execute();
  await db.updateTable('conversations').set({ assignee_id: null }).where('assignee_id', '=', personId).execute();
}

/** A condition for a query over `contacts`: the contact has a conversation in one of these inboxes. */
export function contactHasConversationIn(eb: ExpressionBuilder<Database, 'contacts'>, inboxIds: readonly string[]) {
  return eb.exists(
    eb
      .selectFrom('conversations')
      .select('conversations.id')
      .whereRef('conversations.contact_id', '=', 'contacts.id')
      .where('conversations.inbox_id', 'in', [...inboxIds]),
  );
}

/**
 * A condition for a query over `contacts`: the contact has a conversation that is not closed (nor
 * spam), in these inboxes (null: any).
 */
export function contactHasOpenConversation(eb: ExpressionBuilder<Database, 'contacts'>, inboxIds: readonly string[] | null) {
  let open = eb
    .selectFrom('conversations')
    .select('conversations.id')
    .whereRef('conversations.contact_id', '=', 'contacts.id')
    .where('conversations.status', '!=', 'closed')
    .where('conversations.spam', '=', 0);
  if (inboxIds !== null) open = open.where('conversations.inbox_id', 'in', inboxIds.length ? [...inboxIds] : ['']);
  return eb.exists(open);
}

/** A conversation by id alone (callers that hold an id from their own rows, not from a request). */
const CHUNK = 500;

/** A list in parts small enough for one statement's parameters. */
export function chunks<T>(list: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += CHUNK) out.push(list.slice(i, i + CHUNK));
  return out;
}

/** These conversations (by id, those that exist), read in statements of a few hundred ids. */
export async function conversationsByIds(db: Db, ids: readonly string[]): Promise<ConversationRow[]> {
  const parts = await Promise.all(chunks([...new Set(ids)]).map((part) => db.selectFrom('conversations').selectAll().where('id', 'in', part).execute()));
  return parts.flat();
}

/** These messages (by id, those that exist), read in statements of a few hundred ids. */
export async function messagesByIds(db: Db, ids: readonly string[]): Promise<MessageRow[]> {
  const parts = await Promise.all(chunks([...new Set(ids)]).map((part) => db.selectFrom('messages').selectAll().where('id', 'in', part).execute()));
  return parts.flat();
}

export async function conversationById(db: Db, id: string): Promise<ConversationRow | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The inbox of each of these conversations, by conversation id, in one query. */
export async function inboxesOfConversations(db: Db, conversationIds: readonly string[]): Promise<Map<string, string>> {
  if (conversationIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('conversations')
    .select(['id', 'inbox_id'])
    .where('id', 'in', [...new Set(conversationIds)])
    .execute();
  return new Map(rows.map((c) => [c.id, c.inbox_id]));
}

/** A message by id alone, with its direction and the headers we sent. */
export async function messageById(db: Db, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The newest message of a conversation that has a Message-ID (what a reply threads under). */
export async function latestMailOf(db: Db, conversationId: string): Promise<Pick<MessageRow, 'mail_message_id' | 'mail_references'> | undefined> {
  // A forward answers nothing: a reply never answers it.
  return db
    .selectFrom('messages')
    .select(['mail_message_id', 'mail_references'])
    .where('conversation_id', '=', conversationId)
    .where('mail_message_id', 'is not', null)
    .where('forwarded_message_id', 'is', null)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The newest inbound mail of a conversation with a reply address, newest first (where a reply goes: src/mail/reply-recipients.ts). */
export async function latestInboundMail(
  db: Db,
  conversationId: string,
  limit: number,
): Promise<Pick<MessageRow, 'mail_reply_to' | 'mail_headers' | 'author_contact_id'>[]> {
  return db
    .selectFrom('messages')
    .select(['mail_reply_to', 'mail_headers', 'author_contact_id'])
    .where('conversation_id', '=', conversationId)
    .where('direction', '=', 'in')
    .where('kind', '=', 'message')
    .where('mail_reply_to', 'is not', null)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Replies through the channel that failed for good with an error like `errorLike` (the oldest first). */
export async function failedRepliesOfChannel(db: Db, channelId: string, errorLike: string): Promise<string[]> {
  const rows = await db
    .selectFrom('messages')
    .innerJoin('conversations', 'conversations.id', 'messages.conversation_id')
    .select('messages.id')
    .where('conversations.channel_id', '=', channelId)
    .where('messages.direction', '=', 'out')
    .where('messages.delivery_status', '=', 'failed')
    .where('messages.delivery_error', 'like', errorLike)
    .orderBy('messages.id')
    .execute();
  return rows.map((r) => r.id);
}

/** Stores how sending a reply went (status, attempts, error, and once sent its time and headers). */
export async function setMessageDelivery(
  db: Db,
  messageId: string,
  set: Partial<Pick<MessageRow, 'delivery_status' | 'delivery_attempts' | 'delivery_error' | 'delivery_retry_at' | 'sent_at' | 'mail_headers'>>,
): Promise<void> {
  await db.updateTable('messages').set(set).where('id', '=', messageId).execute();
}

/** Open conversations assigned to each of these members (workspace-wide): auto-assignment's load and capacity. */
export async function openAssignedCounts(db: Db, workspaceId: string, personIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(personIds.map((id) => [id, 0]));
  if (personIds.length === 0) return out;
  const rows = await db
    .selectFrom('conversations')
    .select(['assignee_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('assignee_id', 'in', personIds)
    .where('status', '=', 'open')
    .groupBy('assignee_id')
    .execute();
  for (const r of rows) out.set(r.assignee_id!, Number(r.n));
  return out;
}

/** A team's conversations that are not closed (optionally only those assigned to one member), oldest first. */
export async function liveConversationsOfTeam(db: Db, workspaceId: string, teamId: string, assigneeId?: string): Promise<ConversationRow[]> {
  let q = db.selectFrom('conversations').selectAll().where('workspace_id', '=', workspaceId).where('team_id', '=', teamId).where('status', '!=', 'closed');
  if (assigneeId) q = q.where('assignee_id', '=', assigneeId);
  return q.orderBy('id').execute();
}

/** Closed conversations of a deleted team leave it without a timeline line (they are history). */
export async function clearTeamOfClosed(db: Db, workspaceId: string, teamId: string): Promise<number> {
  const r = await db
    .updateTable('conversations')
    .set({ team_id: null })
    .where('workspace_id', '=', workspaceId)
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Open and open-unassigned conversations per team (the teams page's figures). */
export async function openCountsByTeam(db: Db, workspaceId: string): Promise<Map<string, { open: number; unassigned: number }>> {
  const rows = await db
    .selectFrom('conversations')
    .select(['team_id', 'assignee_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('team_id', 'is not', null)
    .where('status', '=', 'open')
    .where('spam', '=', 0)
    .groupBy(['team_id', 'assignee_id'])
    .execute();
  const out = new Map<string, { open: number; unassigned: number }>();
  for (const r of rows) {
    const c = out.get(r.team_id!) ?? { open: 0, unassigned: 0 };
    c.open += Number(r.n);
    if (r.assignee_id === null) c.unassigned += Number(r.n);
    out.set(r.team_id!, c);
  }
  return out;
}
