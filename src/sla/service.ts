// SLA (issue 35): the `sla.check` job. At a target's warning time (80 %) and at its due time it
// records the warning or the breach in the conversation's SLA state and, in the same transaction,
// a realtime `conversation.sla` event that the notifications reaction turns into notifications
// (the assignee, or the inbox's members when unassigned). The state's compare-and-set makes each
// warning and breach happen once, also when two processes run the job or it runs again after a crash.
import type { Ctx } from '../context.js';
import { formatConversation } from '../conversations/format.js';
import { conversationById, labelsOf } from '../conversations/store.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents, recordEvent } from '../events/service.js';
import type { JobKind } from '../platform/jobs.js';
import { nextCheck, sortKey } from './engine.js';
import { type Moved, moveSla, SLA_CHECK_JOB, type SlaCheckPayload } from './move.js';

/** Runs one check: what it recorded, and when to look again. */
export async function checkSla(ctx: Pick<Ctx, 'db' | 'clock' | 'log' | 'hub'>, payload: SlaCheckPayload) {
  const out = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const row = await conversationById(trx, payload.conversationId);
    if (!row) return { notices: [] as Moved['notices'], next: null };
    const now = ctx.clock.now();
    const moved = await moveSla(tx, row, { kind: 'check', at: now });
    if (moved.changed && moved.notices.length) {
      const text = moved.state ? JSON.stringify(moved.state) : null;
      const conversation = { ...row, sla: text, sla_due_at: sortKey(moved.state, row.status === 'closed') };
      const labels = (await labelsOf(trx, [row.id])).get(row.id) ?? [];
      for (const notice of moved.notices)
        await recordEvent(tx, {
          workspaceId: row.workspace_id,
          inboxId: row.inbox_id,
          contactId: row.contact_id,
          type: 'conversation.sla',
          occurredAt: now,
          webhook: false,
          data: { conversation: formatConversation(conversation, labels), sla_notice: notice },
        });
    }
    return { notices: moved.changed ? moved.notices : [], next: nextCheck(moved.state, row.status === 'closed') };
  });
  if (out.notices.length) {
    announceEvents(ctx);
    for (const n of out.notices) ctx.log.info(`sla ${n.kind}`, { conversation_id: payload.conversationId, target: n.target, due_at: n.due_at });
  }
  return out;
}

export function slaCheckJob(ctx: Ctx): JobKind<SlaCheckPayload> {
  return {
    kind: SLA_CHECK_JOB,
    async run(payload) {
      const { next } = await checkSla(ctx, payload);
      if (next && next > ctx.clock.now()) return { retryAt: next };
    },
  };
}
