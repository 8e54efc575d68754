// Rendering saved replies and signatures for one conversation, on the server so that the panel, API
// clients and outgoing mail share one implementation (./placeholders.ts holds the syntax).

import type { Access } from '../auth/access.js';
import { loadContactView } from '../contacts/store.js';
import type { Ctx } from '../context.js';
import type { ConversationRow } from '../conversations/format.js';
import { getConversationFor } from '../conversations/service.js';
import type { Db } from '../db/schema.js';
import { findInbox } from '../inboxes/store.js';
import { isMemberOf } from '../members/store.js';
import { findPersonById } from '../people/service.js';
import { invalid } from '../platform/errors.js';
import { renderHtmlPlaceholders } from './formatted.js';
import { checkPlaceholders, firstWord, type PlaceholderValues, renderPlaceholders } from './placeholders.js';
import { getSavedReply, requireReplyReader } from './service.js';

/** What the placeholders stand for in a conversation, written by `personId` (null: no member). */
export async function placeholderValues(db: Db, conversation: ConversationRow, personId: string | null): Promise<PlaceholderValues> {
  const [contact, inbox, person] = await Promise.all([
    loadContactView(db, conversation.workspace_id, conversation.contact_id),
    findInbox(db, conversation.inbox_id),
    personId ? findPersonById({ db }, personId) : undefined,
  ]);
  return {
    'contact.name': contact?.contact.name ?? null,
    'contact.first_name': firstWord(contact?.contact.name),
    'contact.email': contact?.emails[0] ?? null,
    'member.name': person?.name ?? null,
    'member.first_name': firstWord(person?.name),
    'member.email': person?.email ?? null,
    'inbox.name': inbox?.name ?? null,
    'conversation.subject': conversation.subject,
  };
}

/**
 * Renders a saved reply (by id) or any text for a conversation the caller reaches, as written by
 * the calling member (or, for API keys, the member named by `memberId`).
 */
export async function renderForConversation(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  access: Access,
  conversationId: string,
  input: { savedReplyId?: string; body?: string; memberId?: string },
): Promise<{ body: string; html: string | null }> {
  requireReplyReader(access);
  if ((input.savedReplyId === undefined) === (input.body === undefined)) throw invalid('give either saved_reply_id or body');
  if (input.memberId && access.actor.kind === 'member') throw invalid('member_id is for API keys; members render as themselves');
  const conversation = await getConversationFor(ctx, access, conversationId);
  let personId = access.actor.kind === 'member' ? access.actor.personId : null;
  if (input.memberId) {
    if (!(await isMemberOf(ctx.db, access.workspaceId, input.memberId))) throw invalid(`member_id ${input.memberId} is not a member of this workspace`);
    personId = input.memberId;
  }
  const saved = input.savedReplyId !== undefined ? await getSavedReply(ctx, access, input.savedReplyId) : null;
  const text = saved ? saved.body : input.body!;
  if (input.body !== undefined) checkPlaceholders(text, 'body');
  const values = await placeholderValues(ctx.db, conversation, personId);
  // A formatted reply is inserted formatted: its html, filled in with escaped values.
  return { body: renderPlaceholders(text, values), html: saved?.html ? renderHtmlPlaceholders(saved.html, values) : null };
}
