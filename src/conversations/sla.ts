// Conversation functions made for SLA (src/sla): storing a conversation's SLA state, and the
// compare-and-set that makes a change of it happen once (two processes checking the same
// conversation: the second finds the state it read gone and changes nothing).
import type { Db } from '../db/schema.js';

/**
 * Replaces the SLA state while it is still `expected` (the text read in this transaction).
 * Returns false when another change came first.
 */
export async function storeConversationSla(
  db: Db,
  conversationId: string,
  expected: string | null | undefined,
  next: { sla: string | null; dueAt: string },
): Promise<boolean> {
  let q = db.updateTable('conversations').set({ sla: next.sla, sla_due_at: next.dueAt }).where('id', '=', conversationId);
  q = expected == null ? q.where('sla', 'is', null) : q.where('sla', '=', expected);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
