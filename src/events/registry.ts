// The one list of reactions to what happens in svc. `recordEvent` (events in the spec's stream) and
// `recordSignal` (internal signals, typed below) run every reaction inside the transaction of the
// change, and a reaction writes its own durable work there (outbox rows, jobs): when the change
// commits its consequences are stored with it, and a crash after the commit loses nothing.
//
// Shape (no import cycle): this module imports the reactions; their types are in reaction-types.ts.
// A reaction module imports only `src/db`, `src/platform`, those types and low-level modules of its
// own feature, never a service that records events (that service imports this list). Work that needs the whole server (reading other
// features, sending) belongs in the job the reaction stores, not in the reaction.

import { automationReaction } from '../automation/reaction.js';
import { customFieldsReaction } from '../custom-fields/reaction.js';
import { awayReplyReaction, greetingReaction } from '../greeting/reaction.js';
import { tenantUpkeepReaction } from '../mailer-tenants/reaction.js';
import { notificationsReaction } from '../notifications/reaction.js';
import { ratingRequestReaction } from '../ratings/reaction.js';
import { contactOnlineReaction } from '../realtime/online.js';
import { statisticsReaction } from '../reports/statistics.js';
import { slaReaction } from '../sla/reaction.js';
import { snoozeReaction } from '../snooze/reaction.js';
import { webhookOutboxReaction } from '../webhooks/outbox.js';
import type { InternalSignals, Reaction, ReactionTx, RecordedEvent, SignalName } from './reaction-types.js';

export type * from './reaction-types.js';

/** The registry, in the order the reactions run. */
export const reactions: readonly Reaction[] = [
  slaReaction,
  customFieldsReaction,
  contactOnlineReaction,
  webhookOutboxReaction,
  notificationsReaction,
  tenantUpkeepReaction,
  statisticsReaction,
  greetingReaction,
  awayReplyReaction,
  ratingRequestReaction,
  snoozeReaction,
  automationReaction,
];

export async function enrichEvent(
  tx: ReactionTx,
  event: { type: string; data: Record<string, unknown>; workspaceId: string },
  list: readonly Reaction[] = reactions,
): Promise<Record<string, unknown>> {
  let data = event.data;
  for (const r of list) if (r.enrich) data = await r.enrich(tx, { type: event.type, data, workspaceId: event.workspaceId });
  return data;
}

export async function reactToEvent(tx: ReactionTx, event: RecordedEvent, list: readonly Reaction[] = reactions): Promise<void> {
  for (const r of list) if (r.onEvent) await r.onEvent(tx, event);
}

export async function reactToSignal<K extends SignalName>(
  tx: ReactionTx,
  name: K,
  payload: InternalSignals[K],
  list: readonly Reaction[] = reactions,
): Promise<void> {
  for (const r of list) {
    const handler = r.signals?.[name] as ((tx: ReactionTx, payload: InternalSignals[K]) => Promise<void>) | undefined;
    if (handler) await handler(tx, payload);
  }
}
