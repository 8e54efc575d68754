// Conversation functions made for snooze (src/snooze): waking a snoozed conversation exactly once.

import { applyConversationChanges } from './changes.js';
import type { ConversationRow } from './format.js';
import type { Tx } from './service.js';

/** Why a snoozed conversation woke: its time came, or the customer wrote. */
export type WakeReason = 'snooze_ended' | 'customer_reply';

/**
 * Wakes a snoozed conversation inside the caller's transaction: back to open, the snooze cleared,
 * one event line and one conversation.updated. The first statement clears the snooze only while it
 * is still the one read (same snoozed_at), so two processes waking the same conversation at once
 * (Postgres: the second waits for the first's row lock, then finds nothing to change) wake it once.
 * Returns false when there was nothing to wake.
 */
export async function wakeSnoozedConversation(tx: Tx, conversation: ConversationRow, reason: WakeReason): Promise<boolean> {
  if (!conversation.snoozed_at) return false;
  const taken = await tx.db
    .updateTable('conversations')
    .set({ snoozed_at: null, snoozed_until: null })
    .where('id', '=', conversation.id)
    .where('snoozed_at', '=', conversation.snoozed_at)
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) !== 1) return false;
  await applyConversationChanges(tx, { conversation, patch: { snoozedUntil: null, status: 'open' }, author: { type: 'system' }, reason });
  return true;
}
