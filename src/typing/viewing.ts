// Viewing presence: "Ayşe is viewing this conversation", so two members don't answer the same
// customer. Like typing signals (./service.ts) these are realtime-only events (type `viewing`, never
// webhooks, never messages), scoped to the conversation's inbox like every conversation event, and
// removed by a retention rule after VIEWING_KEEP_MS. The panel sends one when a conversation is open
// and visible, again every VIEWING_REPEAT_MS while it stays so, and a "left" signal (until = now)
// when it closes; a reader treats a viewer as gone once `until` has passed without a newer signal.
import type { Ctx } from '../context.js';
import { announceEvents, deleteEventsOfTypeBefore, recentEventsOfType, recordEvent } from '../events/service.js';
import { iso, MINUTE } from '../platform/clock.js';
import { SignalThrottle } from './service.js';

export const VIEWING_EVENT = 'viewing';
/** How often the panel repeats the signal while the conversation stays open and visible. */
export const VIEWING_REPEAT_MS = 20_000;
/** How long one signal means "viewing": long enough that one late repeat does not make it flicker. */
export const VIEWING_SHOWN_MS = 50_000;
/** Signals from one viewer closer than this are answered but not stored (a reload, two tabs). */
export const VIEWING_MIN_INTERVAL_MS = 10_000;
export const VIEWING_KEEP_MS = 10 * MINUTE;

export class ViewingThrottle extends SignalThrottle {
  constructor(maxEntries = 10_000) {
    super(VIEWING_MIN_INTERVAL_MS, maxEntries);
  }
}

export interface ViewingSignal {
  workspaceId: string;
  inboxId: string;
  conversationId: string;
  viewer: { personId: string; name: string | null };
  /** The member closed the conversation (or the panel): readers stop showing them at once. */
  left?: boolean;
}

export interface Viewer {
  member_id: string;
  name: string | null;
  until: string;
}

/**
 * Stores a viewing (or left) signal unless the same viewer sent one moments ago, and wakes the
 * sockets. Answers with the others viewing the conversation now, so a member who opens it sees who
 * was already there without waiting for their next signal.
 */
export async function signalViewing(
  ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>,
  throttle: ViewingThrottle,
  signal: ViewingSignal,
): Promise<{ stored: boolean; until: string; viewers: Viewer[] }> {
  const stored = await storeViewing(ctx, throttle, signal);
  const viewers = signal.left
    ? []
    : await currentViewers(ctx, { workspaceId: signal.workspaceId, conversationId: signal.conversationId, exceptPersonId: signal.viewer.personId });
  return { ...stored, viewers };
}

/** The members whose latest signal in this conversation says they are viewing it now. */
export async function currentViewers(
  ctx: Pick<Ctx, 'db' | 'clock'>,
  input: { workspaceId: string; conversationId: string; exceptPersonId?: string },
): Promise<Viewer[]> {
  const now = ctx.clock.now().getTime();
  const rows = await recentEventsOfType(ctx, { workspaceId: input.workspaceId, type: VIEWING_EVENT, since: iso(now - VIEWING_SHOWN_MS) });
  const latest = new Map<string, { until: string; left: boolean; name: string | null }>();
  for (const row of rows) {
    const data = JSON.parse(row.data) as { conversation: { id: string }; viewer: { member_id: string; name: string | null }; until: string; left?: boolean };
    if (data.conversation.id === input.conversationId)
      latest.set(data.viewer.member_id, { until: data.until, left: data.left === true, name: data.viewer.name });
  }
  return [...latest]
    .filter(([id, v]) => id !== input.exceptPersonId && !v.left && Date.parse(v.until) > now)
    .map(([id, v]) => ({ member_id: id, name: v.name, until: v.until }));
}

async function storeViewing(
  ctx: Pick<Ctx, 'db' | 'clock' | 'hub'>,
  throttle: ViewingThrottle,
  signal: ViewingSignal,
): Promise<{ stored: boolean; until: string }> {
  const now = ctx.clock.now();
  const key = `${signal.conversationId}:${signal.viewer.personId}`;
  const until = iso(signal.left ? now : now.getTime() + VIEWING_SHOWN_MS);
  // A "left" signal lets the next view through at once; left signals are throttled on their own key.
  if (signal.left) throttle.forget(key);
  if (!throttle.take(signal.left ? `${key}:left` : key, now.getTime())) return { stored: false, until };
  await recordEvent(
    { db: ctx.db, clock: ctx.clock },
    {
      workspaceId: signal.workspaceId,
      inboxId: signal.inboxId,
      type: VIEWING_EVENT,
      occurredAt: now,
      data: {
        conversation: { id: signal.conversationId, inbox_id: signal.inboxId },
        viewer: { type: 'member', member_id: signal.viewer.personId, name: signal.viewer.name },
        until,
        left: signal.left === true,
      },
      webhook: false,
    },
  );
  announceEvents(ctx);
  return { stored: true, until };
}

/** Retention: viewing signals older than VIEWING_KEEP_MS. */
export async function deleteOldViewingSignals(ctx: Pick<Ctx, 'db'>, now: Date, batch: number): Promise<number> {
  return deleteEventsOfTypeBefore(ctx, VIEWING_EVENT, iso(now.getTime() - VIEWING_KEEP_MS), batch);
}
