// Table types of webhooks: endpoints, the delivery outbox (one row per event and endpoint) and the attempt log.
import type { Generated } from 'kysely';

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  url: string;
  /** JSON array of event type names. */
  events: string;
  inbox_id: string | null;
  include_notes: number;
  secret_sealed: string;
  /** The secret replaced by the latest rotation; it keeps signing until previous_secret_expires_at. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  /** Start of the current unbroken run of failed attempts; null after a success. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** Keyed by (event_seq, endpoint_id); the API names a delivery by its event (deliveryIdOf). */
export interface WebhookDeliveriesTable {
  event_seq: number;
  endpoint_id: string;
  workspace_id: string;
  event_id: string;
  status: DeliveryStatus;
  /** Scheduled attempts made so far (manual redeliveries are not counted). */
  attempts: Generated<number>;
  /** When the next scheduled attempt is due; null once finished. */
  next_attempt_at: string | null;
  /** A dispatcher holds the delivery until then; after a crash the lease runs out and it is sent again. */
  lease_until: string | null;
  last_attempt_at: string | null;
  finished_at: string | null;
  /** A manual redelivery was asked for and has not been attempted yet (one attempt, no new schedule). */
  manual_requested_at: string | null;
  created_at: string;
}

/**
 * An event's deliveries not yet made into delivery rows: one row per event, written in the
 * recording transaction; the dispatcher replaces it by the delivery rows (expandOutbox, src/webhooks/dispatcher.ts).
 */
export interface WebhookOutboxTable {
  event_seq: number;
  workspace_id: string;
  event_id: string;
  /** The endpoints the event matched when it was recorded, comma-separated. */
  endpoint_ids: string;
  endpoint_count: number;
  created_at: string;
}

export interface WebhookAttemptsTable {
  id: string;
  /** The delivery: (event_seq, endpoint_id). */
  event_seq: number;
  endpoint_id: string;
  event_id: string;
  workspace_id: string;
  /** 1-based number of the scheduled attempt; null for a manual redelivery. */
  attempt: number | null;
  manual: number;
  started_at: string;
  duration_ms: number;
  outcome: 'succeeded' | 'failed';
  status_code: number | null;
  /** The start of the receiver's answer. */
  response: string | null;
  error: string | null;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_outbox: WebhookOutboxTable;
  webhook_attempts: WebhookAttemptsTable;
}
