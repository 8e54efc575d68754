// Snooze's reaction (src/events/registry.ts): a customer's message in a snoozed conversation
// brings its `snooze.wake` job forward to now, in the message's own transaction. The event's data
// already says whether the conversation sleeps, so mail to conversations that do not costs no query.
import type { Reaction } from '../events/reaction-types.js';
import { scheduleWake } from './schedule.js';

type Shown = { id?: string; imported?: boolean; snoozed_at?: string | null };
type ShownMessage = { kind?: string; direction?: string; automatic?: boolean };

export const snoozeReaction: Reaction = {
  name: 'snooze',
  async onEvent(tx, event) {
    if (event.type !== 'message.created') return;
    const conversation = event.data.conversation as Shown | undefined;
    const message = event.data.message as ShownMessage | undefined;
    if (!conversation?.id || !conversation.snoozed_at || conversation.imported) return;
    // Auto-replies and reports never wake a conversation, as they never reopen one.
    if (message?.kind !== 'message' || message.direction !== 'in' || message.automatic) return;
    await scheduleWake(tx.db, tx.clock, { workspaceId: event.workspaceId, conversationId: conversation.id }, tx.clock.now());
  },
};
