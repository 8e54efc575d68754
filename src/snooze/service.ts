// Snooze (issue 35): the `snooze.wake` job. It reads the conversation and wakes it when the customer
// wrote since it was snoozed or its time has come; a job that runs before the time (the snooze was
// moved later) is put off to the new time, and one that finds nothing snoozed ends.

import type { Ctx } from '../context.js';
import { type WakeReason, wakeSnoozedConversation } from '../conversations/snooze.js';
import { findConversation } from '../conversations/store.js';
import { inTransaction } from '../db/transaction.js';
import { announceEvents } from '../events/service.js';
import type { JobKind } from '../platform/jobs.js';
import { SNOOZE_WAKE_JOB, type SnoozeWakePayload } from './schedule.js';

/** Why it should wake now, or when to look again (undefined: not snoozed, nothing to do). */
export function wakeDecision(
  c: { snoozed_at?: string | null; snoozed_until?: string | null; last_inbound_at?: string | null },
  now: Date,
): { wake: WakeReason } | { later: Date } | undefined {
  if (!c.snoozed_at) return undefined;
  if (c.last_inbound_at && c.last_inbound_at > c.snoozed_at) return { wake: 'customer_reply' };
  if (!c.snoozed_until) return undefined;
  if (c.snoozed_until <= now.toISOString()) return { wake: 'snooze_ended' };
  return { later: new Date(c.snoozed_until) };
}

/** Runs one wake-up; says what happened (tests and logs). */
export async function wakeConversation(ctx: Pick<Ctx, 'db' | 'clock' | 'log' | 'hub'>, payload: SnoozeWakePayload) {
  const outcome = await inTransaction(ctx.db, async (trx) => {
    const tx = { db: trx, clock: ctx.clock };
    const conversation = await findConversation(trx, payload.workspaceId, payload.conversationId);
    if (!conversation) return { done: 'gone' as const };
    const decision = wakeDecision(conversation, ctx.clock.now());
    if (!decision) return { done: 'not_snoozed' as const };
    if ('later' in decision) return { later: decision.later };
    const woke = await wakeSnoozedConversation(tx, conversation, decision.wake);
    return { done: woke ? decision.wake : ('not_snoozed' as const) };
  });
  if ('done' in outcome && (outcome.done === 'snooze_ended' || outcome.done === 'customer_reply')) {
    announceEvents(ctx);
    ctx.log.info('conversation woke', { conversation_id: payload.conversationId, reason: outcome.done });
  }
  return outcome;
}

export function snoozeWakeJob(ctx: Ctx): JobKind<SnoozeWakePayload> {
  return {
    kind: SNOOZE_WAKE_JOB,
    async run(payload) {
      const outcome = await wakeConversation(ctx, payload);
      if ('later' in outcome && outcome.later) return { retryAt: outcome.later };
    },
  };
}
