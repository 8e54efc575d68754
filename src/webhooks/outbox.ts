// The durable outbox: when an event is recorded, one delivery row per interested endpoint is written
// in the same transaction, so that a crash can neither lose an event's deliveries nor invent them.
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

const enqueueStatements = new Map<string, string>();

/**
 * The statement that writes one event's deliveries, by shape (dialect, note or not, how many inboxes
 * the event concerns); its text is built once per shape. `events` is a JSON array of type names: the
 * quoted name occurs in it exactly when it is listed, and a substring search (instr, strpos) costs
 * about half of what LIKE does per endpoint.
 */
function enqueueStatement(postgres: boolean, note: boolean, inboxCount: number): string {
  const key = `${postgres}|${note}|${inboxCount}`;
  let text = enqueueStatements.get(key);
  if (text === undefined) {
    let n = 0;
    const param = () => (postgres ? `$${++n}` : '?');
    text = `insert into webhook_deliveries
      (event_seq, endpoint_id, workspace_id, event_id, status, next_attempt_at, created_at)
    select ${param()}, e.id, e.workspace_id, ${param()}, 'pending', ${param()}, ${param()}
    from webhook_endpoints e
    where e.workspace_id = ${param()}
      and e.disabled_at is null
      and ${postgres ? 'strpos' : 'instr'}(e.events, ${param()}) > 0
      ${note ? 'and e.include_notes = 1' : ''}
      and (e.inbox_id is null${inboxCount ? ` or e.inbox_id in (${Array.from({ length: inboxCount }, param).join(', ')})` : ''})`;
    // Contact events may concern any number of inboxes: only the common shapes are kept.
    if (inboxCount <= 8) enqueueStatements.set(key, text);
  }
  return text;
}

type EndpointFilter = { events: string; include_notes: number; inbox_id: string | null };

/** What decides which of a workspace's endpoints take an event (the conditions of enqueueStatement). */
const endpointFilters = reusableQuery((db, workspaceId: string) =>
  db.selectFrom('webhook_endpoints').select(['events', 'include_notes', 'inbox_id']).where('workspace_id', '=', workspaceId),
);

/**
 * Writes the deliveries of one event in one statement; call inside the transaction that recorded it.
 * An enabled endpoint of the workspace receives the event when it lists the type, notes only with
 * include_notes, and with an inbox filter only that inbox's conversations plus contact events of
 * contacts that have an external id or a conversation in that inbox.
 */
export async function enqueueDeliveries(ctx: { db: Db; clock: Clock }, event: OutboxEvent): Promise<number> {
  if (event.webhook !== 1) return 0;
  const now = iso(ctx.clock.now());
  const inboxes = event.type.startsWith('contact.') ? [...event.relatedInboxIds] : event.inbox_id ? [event.inbox_id] : [];
  // The workspace's endpoint filters are cached (src/events/settings-cache.ts): an event that no
  // endpoint could take costs no statement. Whether an endpoint is disabled is not cached: the
  // statement checks it.
  const endpoints = await cachedReactionSetting(ctx.db, `webhooks:${event.workspace_id}`, () => endpointFilters(ctx.db, event.workspace_id));
  const quoted = JSON.stringify(event.type);
  const wanted = (e: EndpointFilter) =>
    e.events.includes(quoted) && (event.is_note !== 1 || e.include_notes === 1) && (e.inbox_id === null || inboxes.includes(e.inbox_id));
  if (!endpoints.some(wanted)) return 0;
  // Plain SQL text, built once per shape: building and compiling it per event cost more than running it.
  const text = enqueueStatement(isPostgres(ctx.db), event.is_note === 1, inboxes.length);
  const result = await ctx.db.executeQuery(
    CompiledQuery.raw(text, [event.seq, event.id, now, now, event.workspace_id, JSON.stringify(event.type), ...inboxes]),
  );
  return Number(result.numAffectedRows ?? 0);
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
    return { now, pending: Number(row.pending), due: Number(row.due), oldest: row.oldest };
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
