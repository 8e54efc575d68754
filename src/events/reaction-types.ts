// The types of the reaction registry (src/events/registry.ts), apart from the list itself, so that
// the feature modules holding reactions can import them without importing the list (no cycle).
import type { Db } from '../db/schema.js';
import type { Clock } from '../platform/clock.js';

/** What a reaction may use: the recording transaction and the clock. */
export interface ReactionTx {
  db: Db;
  clock: Clock;
}

/**
 * Why an event happened, for reactions only (never stored, never sent): who acted and what changed.
 * Notifications use it to leave out a member's own actions and to see an assignment.
 */
export interface EventCause {
  /** The member whose action caused the event (absent for customers, API keys and the server). */
  personId?: string | null;
  /** conversation.updated: the fields that changed. */
  changes?: Record<string, { from: unknown; to: unknown }>;
  /** conversation.updated: why the server made the change (customer_reply, snooze_ended, …). */
  reason?: string;
  /** A change made by automation rules (src/automation): how deep the chain is and which rules made it (the loop guard). */
  automation?: { depth: number; ruleIds: readonly string[] };
}

/** An event as reactions see it, after its row was written. */
export interface RecordedEvent {
  id: string;
  seq: number;
  workspaceId: string;
  inboxId: string | null;
  contactId: string | null;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
  isNote: boolean;
  /** false for realtime-only events. */
  webhook: boolean;
  audience: 'all' | 'admins';
  /** A realtime-only event addressed to one member (a notification). */
  personId: string | null;
  relatedInboxIds: readonly string[];
  cause: EventCause;
}

/** Internal signals: typed names and payloads, in this one place. They are never shown to anyone. */
export interface InternalSignals {
  /** A channel was created, changed or deleted. `former`: the inbox and SMTP host it had before a change or deletion. */
  'channel.saved': { channelId: string; former?: { inboxId: string; smtpHost: string | null } };
}
export type SignalName = keyof InternalSignals;
export type ChannelSavedSignal = InternalSignals['channel.saved'];

/**
 * Names of the reactions. `greeting`, `rating_requests` and `statistics` are the slots of the inbox
 * greeting, satisfaction ratings and reports (issue 18, part 2): they join `reactions` below.
 */
export type ReactionName =
  | 'webhooks'
  | 'realtime'
  | 'notifications'
  | 'tenant_upkeep'
  | 'greeting'
  | 'away_reply'
  | 'rating_requests'
  | 'statistics'
  | 'snooze'
  | 'sla'
  | 'custom_fields'
  | 'automation';

export interface Reaction {
  name: ReactionName;
  /** Before the event row is written: fills what the stored data shows (the contact's online flag, custom field values). */
  enrich?(tx: ReactionTx, event: { type: string; data: Record<string, unknown>; workspaceId: string }): Promise<Record<string, unknown>>;
  /** After the event row is written, in the same transaction. */
  onEvent?(tx: ReactionTx, event: RecordedEvent): Promise<void>;
  /** Internal signals this reaction handles, in the transaction that recorded them. */
  signals?: { [K in SignalName]?: (tx: ReactionTx, payload: InternalSignals[K]) => Promise<void> };
}
