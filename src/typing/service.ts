// Typing signals: "the visitor is typing" for the panel, "the team is typing" for the widget.
//
// They are realtime-only events of type `typing` in the event stream (never webhooks), so every
// reader gets them the way it gets replies: the panel's and the widget's sockets, resumed by
// position, and across several server processes sharing one Postgres through the same position
// watch (an in-process hub would not reach a socket held by another process). Being ephemeral,
// they are kept only TYPING_KEEP_MS (a retention rule removes older ones) and each author sends at
// most one per conversation every TYPING_MIN_INTERVAL_MS (later ones are answered but not stored),
// which bounds the writes to one row per typist every few seconds.
import type { Ctx } from '../context.js';
import { announceEvents, deleteEventsOfTypeBefore, recordEvent } from '../events/service.js';
import { iso, MINUTE } from '../platform/clock.js';

export const TYPING_EVENT = 'typing';
/** How long the signal means "typing" to a reader that has not seen another one. */
export const TYPING_SHOWN_MS = 6_000;
export const TYPING_MIN_INTERVAL_MS = 2_500;
export const TYPING_KEEP_MS = 10 * MINUTE;

export type Typist = { type: 'contact'; contactId: string } | { type: 'member'; personId: string; name: string | null };

export interface TypingSignal {
  workspaceId: string;
  inboxId: string;
  conversationId: string;
  typist: Typist;
}

/** One process's memory of the last stored signal per key (conversation and author), bounded. */
export class SignalThrottle {
  private readonly last = new Map<string, number>();
  constructor(
    private readonly minIntervalMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** True when a signal under this key should be stored now. */
  take(key: string, now: number): boolean {
    const previous = this.last.get(key);
    if (previous !== undefined && now - previous < this.minIntervalMs) return false;
    this.last.delete(key);
    if (this.last.size >= this.maxEntries) this.last.delete(this.last.keys().next().value!);
    this.last.set(key, now);
    return true;
  }

  /** The next signal under this key is stored whatever its time (after a "left" signal). */
  forget(key: string): void {
    this.last.delete(key);
  }
}

export class TypingThrottle extends SignalThrottle {
  constructor(maxEntries = 10_000) {
    super(TYPING_MIN_INTERVAL_MS, maxEntries);
  }
}

/** Stores a typing signal (unless the same typist sent one moments ago) and wakes the sockets. */
export async function signalTyping(ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>, throttle: TypingThrottle, signal: TypingSignal): Promise<{ stored: boolean }> {
  const typistId = signal.typist.type === 'contact' ? signal.typist.contactId : signal.typist.personId;
  const now = ctx.clock.now();
  if (!throttle.take(`${signal.conversationId}:${typistId}`, now.getTime())) return { stored: false };
  const author =
    signal.typist.type === 'contact'
      ? { type: 'contact', contact_id: signal.typist.contactId }
      : { type: 'member', member_id: signal.typist.personId, name: signal.typist.name };
  await recordEvent(
    { db: ctx.db, clock: ctx.clock },
    {
      workspaceId: signal.workspaceId,
      inboxId: signal.inboxId,
      type: TYPING_EVENT,
      occurredAt: now,
      data: { conversation: { id: signal.conversationId, inbox_id: signal.inboxId }, author, until: iso(now.getTime() + TYPING_SHOWN_MS) },
      webhook: false,
    },
  );
  announceEvents(ctx);
  return { stored: true };
}

/** Retention: typing signals older than TYPING_KEEP_MS (they mean nothing any more). */
export async function deleteOldTypingSignals(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  return deleteEventsOfTypeBefore(ctx, TYPING_EVENT, iso(now.getTime() - TYPING_KEEP_MS), batch);
}
