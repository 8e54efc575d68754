// The stored side of snooze: the `snooze.wake` job of a conversation (one per conversation, by its
// unique key). A timed snooze stores it for its wake time; a customer's message brings it forward
// to now. The job itself (./service.ts) decides from the conversation's row whether and why it
// wakes, so a job that runs early, late, twice or after the snooze was lifted changes nothing.
// This module imports only the platform, so conversations/changes.ts can call it (no cycle).
import type { Db } from '../db/schema.js';
import type { Clock } from '../platform/clock.js';
import { enqueue } from '../platform/jobs.js';

export const SNOOZE_WAKE_JOB = 'snooze.wake';

export interface SnoozeWakePayload {
  workspaceId: string;
  conversationId: string;
}

/** Stores (or brings forward) the wake-up of a snoozed conversation, in the caller's transaction. */
export async function scheduleWake(db: Db, clock: Clock, payload: SnoozeWakePayload, runAt: Date): Promise<void> {
  await enqueue(db, clock, { kind: SNOOZE_WAKE_JOB, payload, runAt, uniqueKey: `${SNOOZE_WAKE_JOB}:${payload.conversationId}`, sooner: true });
}
