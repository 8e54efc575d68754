// The durable outbox: when an event is recorded, one delivery row per interested endpoint is written
// in the same transaction, so that a crash can neither lose an event's deliveries nor invent them.
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import type { Db } from '../db/schema.js';

export interface EndpointFilter {
  events: string;
  inbox_id: string | null;
  include_notes: number;
}

export interface OutboxEvent {
  seq: number;
  id: string;
  workspace_id: string;
  type: string;
  inbox_id: string | null;
  is_note: number;
  webhook: number;
  /** The inboxes the event concerns (for contact events: external ids and conversations there). */
  relatedInboxIds: readonly string[];
}

/**
 * Whether an endpoint receives an event: the type is listed, notes only with include_notes, and with
 * an inbox filter only that inbox's conversations plus contact events of contacts that have an
 * external id or a conversation in that inbox.
 */
export function endpointWants(endpoint: EndpointFilter, event: OutboxEvent): boolean {
  if (event.webhook !== 1) return false;
  if (!(JSON.parse(endpoint.events) as string[]).includes(event.type)) return false;
  if (event.is_note === 1 && endpoint.include_notes !== 1) return false;
  if (endpoint.inbox_id === null) return true;
  if (event.type.startsWith('contact.')) return event.relatedInboxIds.includes(endpoint.inbox_id);
  return event.inbox_id === endpoint.inbox_id;
}

/** Writes the deliveries of one event; call inside the transaction that recorded it. */
export async function enqueueDeliveries(ctx: { db: Db; clock: Clock }, event: OutboxEvent): Promise<number> {
  if (event.webhook !== 1) return 0;
  const endpoints = await ctx.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'inbox_id', 'include_notes'])
    .where('workspace_id', '=', event.workspace_id)
    .where('disabled_at', 'is', null)
    .execute();
  const wanted = endpoints.filter((e) => endpointWants(e, event));
  if (wanted.length === 0) return 0;
  const now = ctx.clock.now();
  await ctx.db
    .insertInto('webhook_deliveries')
    .values(
      wanted.map((e) => ({
        id: newId('dlv', now.getTime()),
        endpoint_id: e.id,
        workspace_id: event.workspace_id,
        event_seq: event.seq,
        event_id: event.id,
        status: 'pending' as const,
        next_attempt_at: iso(now),
        lease_until: null,
        last_attempt_at: null,
        finished_at: null,
        manual_requested_at: null,
        created_at: iso(now),
      })),
    )
    .execute();
  return wanted.length;
}

/** The webhook-id of a delivery: derived from the event, so identical on every retry and redelivery. */
export function webhookMessageId(eventId: string): string {
  return `msg_${eventId.replace(/^evt_/, '')}`;
}
