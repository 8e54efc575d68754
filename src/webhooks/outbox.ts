// The durable outbox: when an event is recorded, one outbox row naming the interested endpoints is
// written in the same transaction, so that a crash can neither lose an event's deliveries nor invent
// them; the dispatcher makes it into one delivery row per endpoint (expandOutbox, src/webhooks/dispatcher.ts).
import { CompiledQuery, sql } from 'kysely';
import { isPostgres } from '../db/dialect.js';
import { reusableQuery } from '../db/reusable-query.js';
import type { Db } from '../db/schema.js';
import type { Reaction } from '../events/reaction-types.js';
import { cachedReactionSetting } from '../events/settings-cache.js';
import type { Clock } from '../platform/clock.js';
import { iso } from '../platform/clock.js';
import { ageSeconds, databaseGauge, type Metrics } from '../platform/metrics.js';

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

/** What decides which of a workspace's endpoints take an event. */
const endpointFilters = reusableQuery((db, workspaceId: string) =>
  db.selectFrom('webhook_endpoints').select(['id', 'events', 'include_notes', 'inbox_id', 'disabled_at']).where('workspace_id', '=', workspaceId).orderBy('id'),
);

const OUTBOX_INSERT_SQLITE =
  'insert into webhook_outbox (event_seq, workspace_id, event_id, endpoint_ids, endpoint_count, created_at) values (?, ?, ?, ?, ?, ?)';
const OUTBOX_INSERT_POSTGRES =
  'insert into webhook_outbox (event_seq, workspace_id, event_id, endpoint_ids, endpoint_count, created_at) values ($1, $2, $3, $4, $5, $6)';

/**
 * Writes the deliveries of one event as one outbox row (the endpoints it matches); call inside the
 * transaction that recorded it. An endpoint of the workspace receives the event when it lists the
 * type, notes only with include_notes, and with an inbox filter only that inbox's conversations plus
 * contact events of contacts that have an external id or a conversation in that inbox; a disabled
 * endpoint takes none. Returns how many deliveries it stored.
 */
export async function enqueueDeliveries(ctx: { db: Db; clock: Clock }, event: OutboxEvent): Promise<number> {
  if (event.webhook !== 1) return 0;
  const inboxes = event.type.startsWith('contact.') ? event.relatedInboxIds : event.inbox_id ? [event.inbox_id] : [];
  // The workspace's endpoint filters and disabled states are cached (src/events/settings-cache.ts):
  // read again in the transaction after any insert, delete, filter change, disabling or enabling of
  // an endpoint, by whoever made it (migrations 0026, 0027, 0029).
  const endpoints = await cachedReactionSetting(ctx.db, `webhooks:${event.workspace_id}`, () => endpointFilters(ctx.db, event.workspace_id));
  const quoted = JSON.stringify(event.type);
  let ids = '';
  let count = 0;
  for (const e of endpoints) {
    if (
      e.disabled_at !== null ||
      !e.events.includes(quoted) ||
      (event.is_note === 1 && e.include_notes !== 1) ||
      (e.inbox_id !== null && !inboxes.includes(e.inbox_id))
    )
      continue;
    ids = count === 0 ? e.id : `${ids},${e.id}`;
    count++;
  }
  if (count === 0) return 0;
  // Plain SQL text: building and compiling it per event cost more than running it.
  await ctx.db.executeQuery(
    CompiledQuery.raw(isPostgres(ctx.db) ? OUTBOX_INSERT_POSTGRES : OUTBOX_INSERT_SQLITE, [
      event.seq,
      event.workspace_id,
      event.id,
      ids,
      count,
      iso(ctx.clock.now()),
    ]),
  );
  return count;
}

/**
 * One delivery of a recorded event to one endpoint, whatever the endpoint's event filter says (an
 * automation rule's send_webhook action, src/automation); call in the transaction that recorded it.
 */
export async function enqueueDeliveryTo(
  ctx: { db: Db; clock: Clock },
  event: { seq: number; id: string; workspaceId: string },
  endpointId: string,
): Promise<void> {
  await ctx.db.executeQuery(
    CompiledQuery.raw(isPostgres(ctx.db) ? OUTBOX_INSERT_POSTGRES : OUTBOX_INSERT_SQLITE, [
      event.seq,
      event.workspaceId,
      event.id,
      endpointId,
      1,
      iso(ctx.clock.now()),
    ]),
  );
}

/** The webhooks reaction (src/events/registry.ts): the event's deliveries, in its transaction. */
export const webhookOutboxReaction: Reaction = {
  name: 'webhooks',
  async onEvent(tx, event) {
    await enqueueDeliveries(tx, {
      seq: event.seq,
      id: event.id,
      workspace_id: event.workspaceId,
      type: event.type,
      inbox_id: event.inboxId,
      is_note: event.isNote ? 1 : 0,
      webhook: event.webhook ? 1 : 0,
      relatedInboxIds: event.relatedInboxIds,
    });
  },
};

/** The webhook-id of a delivery: derived from the event, so identical on every retry and redelivery. */
export function webhookMessageId(eventId: string): string {
  return `msg_${eventId.replace(/^evt_/, '')}`;
}

/** The API's delivery id: one per event under an endpoint (routes always name the endpoint too). */
export function deliveryIdOf(eventId: string): string {
  return `dlv_${eventId.replace(/^evt_/, '')}`;
}

/** The event id a delivery id names, or undefined for a malformed one. */
export function eventIdOfDelivery(deliveryId: string): string | undefined {
  return /^dlv_[0-9a-z]{26}$/.test(deliveryId) ? `evt_${deliveryId.slice(4)}` : undefined;
}

/**
 * The outbox backlog, read at scrape time from the partial index webhook_deliveries_due (pending
 * deliveries by next_attempt_at): svc_webhook_outbox_pending by state (due now, or waiting for a
 * retry) and svc_webhook_outbox_oldest_due_age_seconds. A delivery being sent is not due: its claim
 * moved next_attempt_at to the end of its lease.
 */
export function observeOutbox(ctx: { db: Db; clock: Clock; metrics: Metrics }): void {
  const read = async () => {
    const now = ctx.clock.now();
    const nowText = iso(now);
    const row = await ctx.db
      .selectFrom('webhook_deliveries')
      .select([
        sql<number>`count(*)`.as('pending'),
        sql<number>`coalesce(sum(case when next_attempt_at <= ${nowText} then 1 else 0 end), 0)`.as('due'),
        sql<string | null>`min(next_attempt_at)`.as('oldest'),
      ])
      .where(sql<boolean>`status = 'pending'`)
      .executeTakeFirstOrThrow();
    // Events whose deliveries the dispatcher has not made into rows yet are due.
    const outbox = await ctx.db
      .selectFrom('webhook_outbox')
      .select([sql<number>`coalesce(sum(endpoint_count), 0)`.as('deliveries'), sql<string | null>`min(created_at)`.as('oldest')])
      .executeTakeFirstOrThrow();
    const waiting = Number(outbox.deliveries);
    const oldest = outbox.oldest !== null && (row.oldest === null || outbox.oldest < row.oldest) ? outbox.oldest : row.oldest;
    return { now, pending: Number(row.pending) + waiting, due: Number(row.due) + waiting, oldest };
  };
  databaseGauge(ctx.metrics, {
    name: 'svc_webhook_outbox_pending',
    help: 'Webhook deliveries not finished, by state: due (to be sent now) or waiting (for a retry).',
    labelNames: ['state'] as const,
    read: async () => {
      const r = await read();
      return [
        { labels: { state: 'due' }, value: r.due },
        { labels: { state: 'waiting' }, value: r.pending - r.due },
      ];
    },
  });
  databaseGauge(ctx.metrics, {
    name: 'svc_webhook_outbox_oldest_due_age_seconds',
    help: 'How long the longest-waiting due webhook delivery has been due (0 when none is).',
    read: async () => {
      const r = await read();
      return [{ value: r.due > 0 ? ageSeconds(r.now, r.oldest) : 0 }];
    },
  });
}
