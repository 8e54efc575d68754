// The ratings reaction: a close by a person (a member or an API key: not retention, not a
// migration) of a conversation in an inbox that asks for ratings writes the one rating request of
// the conversation (a unique index) in the closing transaction, with a `rating.request` job for
// e-mail conversations; chat conversations are asked in the widget.
import { closedInLatestChange, findConversation, firstMessage } from '../conversations/store.js';
import type { Reaction, ReactionTx, RecordedEvent } from '../events/reaction-types.js';
import { isNoReplyAddress } from '../greeting/rules.js';
import { DAY, iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { enqueue } from '../platform/jobs.js';

export const RATING_REQUEST_JOB = 'rating.request';
/** How long a rating request's links work. */
export const RATING_LINK_DAYS = 30;

/** The reaction to conversation.updated: a close by a person asks the customer once, if the inbox wants ratings. */
async function askForRating(tx: ReactionTx, event: RecordedEvent): Promise<void> {
  if (event.type !== 'conversation.updated') return;
  const shown = event.data.conversation as { id?: string; status?: string; imported?: boolean } | undefined;
  if (!shown?.id || shown.status !== 'closed' || shown.imported) return;
  const closed = await closedInLatestChange(tx.db, shown.id);
  if (!closed || (closed.authorType !== 'member' && closed.authorType !== 'api_key')) return;
  const conversation = await findConversation(tx.db, event.workspaceId, shown.id);
  if (!conversation || conversation.imported === 1 || conversation.spam === 1) return;
  if (conversation.source !== 'email' && conversation.source !== 'chat') return;
  const settings = await tx.db.selectFrom('inbox_rating_settings').select('enabled').where('inbox_id', '=', conversation.inbox_id).executeTakeFirst();
  if (settings?.enabled !== 1) return;
  const asked = await tx.db.selectFrom('rating_requests').select('id').where('conversation_id', '=', conversation.id).executeTakeFirst();
  if (asked) return;
  const first = await firstMessage(tx.db, conversation.id);
  if (!first || first.direction !== 'in' || first.automatic === 1) return;
  if (conversation.source === 'email' && (!first.mail_reply_to || isNoReplyAddress(first.mail_reply_to))) return;
  const now = tx.clock.now();
  const id = newId('rr', now.getTime());
  await tx.db
    .insertInto('rating_requests')
    .values({
      id,
      workspace_id: conversation.workspace_id,
      inbox_id: conversation.inbox_id,
      conversation_id: conversation.id,
      contact_id: conversation.contact_id,
      via: conversation.source,
      // The widget shows a chat request when it reads the conversation; mail waits for its job.
      status: conversation.source === 'chat' ? 'sent' : 'pending',
      error: null,
      created_at: iso(now),
      expires_at: iso(new Date(now.getTime() + RATING_LINK_DAYS * DAY)),
      answered_at: null,
    })
    .execute();
  if (conversation.source === 'email')
    await enqueue(tx.db, tx.clock, { kind: RATING_REQUEST_JOB, payload: { requestId: id }, uniqueKey: `${RATING_REQUEST_JOB}:${id}` });
}

export const ratingRequestReaction: Reaction = { name: 'rating_requests', onEvent: askForRating };
