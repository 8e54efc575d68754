// The greeting's reaction: the first inbound mail of a new e-mail conversation in an inbox with the
// greeting on stores a `greeting.send` job in the recording transaction; the job (./service.ts)
// checks every rule and writes the greeting with its email.send job.
import { firstMessage } from '../conversations/store.js';
import { reusableQuery } from '../db/reusable-query.js';
import type { Reaction } from '../events/reaction-types.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import { enqueue } from '../platform/jobs.js';
import { AWAY_JOB, type AwayJobPayload, awayReplyOpening } from './away-rules.js';

export const GREETING_JOB = 'greeting.send';

export interface GreetingJobPayload {
  workspaceId: string;
  conversationId: string;
  messageId: string;
}

const greetingSwitch = reusableQuery((db, inboxId: string) => db.selectFrom('inbox_greetings').select('enabled').where('inbox_id', '=', inboxId));

export const greetingReaction: Reaction = {
  name: 'greeting',
  async onEvent(tx, event) {
    if (event.type !== 'message.created' || !event.inboxId) return;
    const conversation = event.data.conversation as { id?: string; source?: string; imported?: boolean } | undefined;
    const message = event.data.message as { id?: string; kind?: string; direction?: string; automatic?: boolean } | undefined;
    if (!conversation?.id || conversation.source !== 'email' || conversation.imported) return;
    if (!message?.id || message.kind !== 'message' || message.direction !== 'in' || message.automatic) return;
    const inboxId = event.inboxId;
    const enabled = await cachedReactionSetting(tx.db, `greeting:${inboxId}`, async () => (await greetingSwitch(tx.db, inboxId))[0]?.enabled === 1);
    if (!enabled) return;
    // Only the message that started the conversation.
    if ((await firstMessage(tx.db, conversation.id))?.id !== message.id) return;
    const payload: GreetingJobPayload = { workspaceId: event.workspaceId, conversationId: conversation.id, messageId: message.id };
    await enqueue(tx.db, tx.clock, { kind: GREETING_JOB, payload, uniqueKey: `${GREETING_JOB}:${conversation.id}` });
  },
};

/** A customer's mail while the inbox is closed, with its away reply on: an `away_reply.send` job (./away.ts). */
export const awayReplyReaction: Reaction = {
  name: 'away_reply',
  async onEvent(tx, event) {
    if (event.type !== 'message.created' || !event.inboxId) return;
    const conversation = event.data.conversation as { id?: string; source?: string; imported?: boolean } | undefined;
    const message = event.data.message as { id?: string; kind?: string; direction?: string; automatic?: boolean; created_at?: string } | undefined;
    if (!conversation?.id || conversation.source !== 'email' || conversation.imported) return;
    if (!message?.id || message.kind !== 'message' || message.direction !== 'in' || message.automatic) return;
    const at = message.created_at ? new Date(message.created_at) : tx.clock.now();
    if (!(await awayReplyOpening(tx.db, event.workspaceId, event.inboxId, at))) return;
    const payload: AwayJobPayload = { workspaceId: event.workspaceId, conversationId: conversation.id, messageId: message.id };
    await enqueue(tx.db, tx.clock, { kind: AWAY_JOB, payload, uniqueKey: `${AWAY_JOB}:${message.id}` });
  },
};
