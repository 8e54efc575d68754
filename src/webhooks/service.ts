// Webhook endpoints: create (secret shown once), list, read, update, delete, enable, rotate the
// secret (the old one keeps signing for 24 hours), the delivery and attempt logs, redelivery, and
// the clean-up of finished deliveries.

import { type Selectable, sql } from 'kysely';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { deleteChosen } from '../db/bulk.js';
import type { Db, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.js';
import { WEBHOOK_EVENT_TYPES } from '../events/service.js';
import { findLiveInbox } from '../inboxes/store.js';
import { DAY, HOUR, iso } from '../platform/clock.js';
import { forbidden, invalid, notFound } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { checkWebhookUrl } from './address.js';
import { deliveryIdOf, eventIdOfDelivery, webhookMessageId } from './outbox.js';
import { newSigningSecret } from './signing.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** After a rotation the old secret keeps signing this long (spec Limits). */
export const SECRET_OVERLAP_MS = 24 * HOUR;
/** Finished deliveries are kept this long; the newest DELIVERIES_ALWAYS_KEPT per endpoint always stay. */
export const FINISHED_DELIVERIES_KEPT_MS = 7 * DAY;
export const DELIVERIES_ALWAYS_KEPT = 100;
/** The delivery log shows this many entries (spec: newest 100 per endpoint). */
export const DELIVERY_LOG_SIZE = 100;

type C = Pick<Ctx, 'db' | 'clock' | 'sealer' | 'config' | 'lookup' | 'hub'>;

/**
 * The secrets that sign an attempt made now: the current one, and the previous one during its
 * overlap, each given to `open` (sealed) and returned as it opens them.
 */
export function signingSecrets<T>(
  open: (sealed: string) => T,
  e: Pick<EndpointRow, 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>,
  now: Date,
): T[] {
  const out = [open(e.secret_sealed)];
  if (e.previous_secret_sealed && e.previous_secret_expires_at && Date.parse(e.previous_secret_expires_at) > now.getTime()) {
    out.push(open(e.previous_secret_sealed));
  }
  return out;
}

function checkEvents(events: string[] | undefined): string[] {
  if (events === undefined) return [...WEBHOOK_EVENT_TYPES];
  if (events.length === 0) throw invalid('events must name at least one event type');
  const unknown = events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length) throw invalid(`unknown event type ${unknown.join(', ')}; webhook event types are ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  return [...new Set(events)];
}

/** An inbox filter must name an inbox of the workspace that the caller reaches; an inbox-limited key must set one. */
async function checkInboxFilter(ctx: C, access: Access, inboxId: string | null): Promise<string | null> {
  if (inboxId === null) {
    if (access.inboxIds !== null) throw forbidden('a key limited to some inboxes must set inbox_id to one of them');
    return null;
  }
  if (access.inboxIds !== null && !access.inboxIds.includes(inboxId)) throw invalid(`no inbox ${inboxId} in this workspace`);
  const found = await findLiveInbox(ctx.db, access.workspaceId, inboxId);
  if (!found) throw invalid(`no inbox ${inboxId} in this workspace`);
  return inboxId;
}

export interface EndpointInput {
  url: string;
  events?: string[];
  inbox_id?: string | null;
  include_notes?: boolean;
}

export async function createEndpoint(ctx: C, access: Access, input: EndpointInput): Promise<{ endpoint: EndpointRow; secret: string }> {
  const events = checkEvents(input.events);
  const inboxId = await checkInboxFilter(ctx, access, input.inbox_id ?? null);
  const url = await checkWebhookUrl({ lookup: ctx.lookup, allowPrivate: ctx.config.webhookAllowPrivate }, input.url);
  const secret = newSigningSecret();
  const now = iso(ctx.clock.now());
  const endpoint: EndpointRow = {
    id: newId('wh'),
    workspace_id: access.workspaceId,
    url,
    events: JSON.stringify(events),
    inbox_id: inboxId,
    include_notes: input.include_notes ? 1 : 0,
    secret_sealed: ctx.sealer.seal(secret),
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    disabled_at: null,
    disabled_reason: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
  };
  await ctx.db.insertInto('webhook_endpoints').values(endpoint).execute();
  return { endpoint, secret };
}

/** An endpoint of the workspace by id (automation checks the endpoints its rules name). */
export async function findEndpoint(db: Db, workspaceId: string, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** An endpoint of the caller's workspace that the caller reaches (an inbox-limited key sees its inboxes' endpoints). */
export async function getEndpoint(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<EndpointRow> {
  const row = await ctx.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('workspace_id', '=', access.workspaceId).executeTakeFirst();
  if (!row || (access.inboxIds !== null && (row.inbox_id === null || !access.inboxIds.includes(row.inbox_id)))) throw notFound('webhook endpoint');
  return row;
}

export async function listEndpoints(ctx: Pick<Ctx, 'db'>, access: Access, page: { limit: number; before?: string }): Promise<EndpointRow[]> {
  let q = ctx.db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', access.workspaceId);
  if (access.inboxIds !== null) q = access.inboxIds.length ? q.where('inbox_id', 'in', access.inboxIds) : q.where('id', '=', '');
  if (page.before) q = q.where('id', '<', page.before);
  return q
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

export async function updateEndpoint(ctx: C, access: Access, id: string, patch: Partial<EndpointInput>): Promise<EndpointRow> {
  const current = await getEndpoint(ctx, access, id);
  const set: Partial<EndpointRow> = { updated_at: iso(ctx.clock.now()) };
  if (patch.events !== undefined) set.events = JSON.stringify(checkEvents(patch.events));
  if (patch.inbox_id !== undefined) set.inbox_id = await checkInboxFilter(ctx, access, patch.inbox_id);
  if (patch.include_notes !== undefined) set.include_notes = patch.include_notes ? 1 : 0;
  if (patch.url !== undefined) set.url = await checkWebhookUrl({ lookup: ctx.lookup, allowPrivate: ctx.config.webhookAllowPrivate }, patch.url);
  await ctx.db.updateTable('webhook_endpoints').set(set).where('id', '=', current.id).execute();
  return getEndpoint(ctx, access, id);
}

export async function deleteEndpoint(ctx: Pick<Ctx, 'db'>, access: Access, id: string): Promise<void> {
  const current = await getEndpoint(ctx, access, id);
  // Deliveries and attempts go with it (foreign keys cascade); nothing more is sent.
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', current.id).execute();
    await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', current.id).execute();
    await trx.deleteFrom('webhook_endpoints').where('id', '=', current.id).execute();
  });
}

/** Enables a disabled endpoint again and clears its reason and failure window. */
export async function enableEndpoint(ctx: C, access: Access, id: string): Promise<EndpointRow> {
  const current = await getEndpoint(ctx, access, id);
  await ctx.db
    .updateTable('webhook_endpoints')
    .set({ disabled_at: null, disabled_reason: null, failing_since: null, updated_at: iso(ctx.clock.now()) })
    .where('id', '=', current.id)
    .execute();
  return getEndpoint(ctx, access, id);
}

/** A new secret; the replaced one keeps signing beside it for SECRET_OVERLAP_MS. */
export async function rotateSecret(ctx: C, access: Access, id: string): Promise<{ endpoint: EndpointRow; secret: string }> {
  const current = await getEndpoint(ctx, access, id);
  const secret = newSigningSecret();
  const now = ctx.clock.now();
  await ctx.db
    .updateTable('webhook_endpoints')
    .set({
      secret_sealed: ctx.sealer.seal(secret),
      previous_secret_sealed: current.secret_sealed,
      previous_secret_expires_at: iso(now.getTime() + SECRET_OVERLAP_MS),
      updated_at: iso(now),
    })
    .where('id', '=', current.id)
    .execute();
  return { endpoint: await getEndpoint(ctx, access, id), secret };
}

export function formatEndpoint(e: EndpointRow, now: Date) {
  return {
    id: e.id,
    url: e.url,
    events: JSON.parse(e.events) as string[],
    inbox_id: e.inbox_id,
    include_notes: e.include_notes === 1,
    enabled: e.disabled_at === null,
    disabled_at: e.disabled_at,
    disabled_reason: e.disabled_reason,
    failing_since: e.failing_since,
    previous_secret_expires_at: e.previous_secret_expires_at && Date.parse(e.previous_secret_expires_at) > now.getTime() ? e.previous_secret_expires_at : null,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

// ---- logs and redelivery ----

/** The delivery log: the newest attempts of an endpoint, each with its delivery's state. */
export async function deliveryLog(ctx: Pick<Ctx, 'db'>, access: Access, endpointId: string, limit = DELIVERY_LOG_SIZE) {
  const endpoint = await getEndpoint(ctx, access, endpointId);
  return ctx.db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', (j) => j.onRef('d.event_seq', '=', 'a.event_seq').onRef('d.endpoint_id', '=', 'a.endpoint_id'))
    .leftJoin('events as e', 'e.seq', 'a.event_seq')
    .selectAll('a')
    .select(['d.status as delivery_status', 'd.next_attempt_at', 'd.manual_requested_at', 'e.type as event_type'])
    .where('a.endpoint_id', '=', endpoint.id)
    .orderBy('a.started_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(Math.min(limit, DELIVERY_LOG_SIZE))
    .execute();
}

export type DeliveryLogRow = Awaited<ReturnType<typeof deliveryLog>>[number];

export function formatAttempt(a: AttemptRow) {
  return {
    id: a.id,
    delivery_id: deliveryIdOf(a.event_id),
    webhook_id: webhookMessageId(a.event_id),
    attempt: a.attempt,
    manual: a.manual === 1,
    started_at: a.started_at,
    latency_ms: a.duration_ms,
    status: a.outcome,
    status_code: a.status_code,
    response: a.response,
    error: a.error,
  };
}

export function formatLogEntry(r: DeliveryLogRow) {
  return {
    ...formatAttempt(r),
    event_id: r.event_id,
    event_type: r.event_type,
    delivery_status: r.delivery_status,
    next_attempt_at: r.next_attempt_at,
    redelivery_requested: r.manual_requested_at !== null,
  };
}

export function formatDelivery(d: DeliveryRow) {
  return {
    id: deliveryIdOf(d.event_id),
    webhook_id: webhookMessageId(d.event_id),
    event_id: d.event_id,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.next_attempt_at,
    redelivery_requested: d.manual_requested_at !== null,
    last_attempt_at: d.last_attempt_at,
    finished_at: d.finished_at,
    created_at: d.created_at,
  };
}

/** Every kept attempt of an endpoint, newest first, optionally of one delivery. */
export async function attemptLog(
  ctx: Pick<Ctx, 'db'>,
  access: Access,
  endpointId: string,
  page: { limit: number; before?: { started_at: string; id: string }; deliveryId?: string },
) {
  const endpoint = await getEndpoint(ctx, access, endpointId);
  let q = ctx.db.selectFrom('webhook_attempts as a').selectAll('a').where('a.endpoint_id', '=', endpoint.id);
  if (page.deliveryId) q = q.where('a.event_id', '=', eventIdOfDelivery(page.deliveryId) ?? '');
  if (page.before) {
    const b = page.before;
    q = q.where((eb) => eb.or([eb('a.started_at', '<', b.started_at), eb.and([eb('a.started_at', '=', b.started_at), eb('a.id', '<', b.id)])]));
  }
  return q
    .orderBy('a.started_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/** A delivery of an endpoint by its API id. */
async function findDelivery(ctx: Pick<Ctx, 'db'>, endpointId: string, deliveryId: string): Promise<DeliveryRow> {
  const eventId = eventIdOfDelivery(deliveryId);
  const row = eventId
    ? await ctx.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('events as e', 'e.seq', 'd.event_seq')
        .selectAll('d')
        .where('e.id', '=', eventId)
        .where('d.endpoint_id', '=', endpointId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw notFound('delivery');
  return row;
}

/** Asks for one manual attempt of a delivery (no new schedule); the dispatcher makes it at once. */
export async function requestRedelivery(ctx: C, access: Access, endpointId: string, deliveryId: string): Promise<DeliveryRow> {
  const endpoint = await getEndpoint(ctx, access, endpointId);
  const delivery = await findDelivery(ctx, endpoint.id, deliveryId);
  await ctx.db
    .updateTable('webhook_deliveries')
    .set({ manual_requested_at: iso(ctx.clock.now()) })
    .where('event_seq', '=', delivery.event_seq)
    .where('endpoint_id', '=', endpoint.id)
    .execute();
  ctx.hub.emit('webhooks');
  return findDelivery(ctx, endpoint.id, deliveryId);
}

/** The event_seq of an endpoint's newest deliveries, by their latest attempt. */
async function newestDeliveries(ctx: Pick<Ctx, 'db'>, endpointId: string, count: number): Promise<number[]> {
  const seqs = new Set<number>();
  let before: { started_at: string; id: string } | undefined;
  while (seqs.size < count) {
    let q = ctx.db.selectFrom('webhook_attempts').select(['event_seq', 'started_at', 'id']).where('endpoint_id', '=', endpointId);
    if (before) {
      const b = before;
      q = q.where((eb) => eb.or([eb('started_at', '<', b.started_at), eb.and([eb('started_at', '=', b.started_at), eb('id', '<', b.id)])]));
    }
    const rows = await q.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(500).execute();
    for (const r of rows) {
      if (seqs.size === count) break;
      seqs.add(Number(r.event_seq));
    }
    if (rows.length < 500) break;
    before = rows[rows.length - 1];
  }
  return [...seqs];
}

/**
 * Removes finished deliveries (with their attempts) that finished more than
 * FINISHED_DELIVERIES_KEPT_MS ago, except the newest DELIVERIES_ALWAYS_KEPT of each endpoint.
 */
export async function pruneDeliveries(ctx: Pick<Ctx, 'db' | 'clock'>, batch = Number.POSITIVE_INFINITY): Promise<number> {
  const cutoff = iso(ctx.clock.now().getTime() - FINISHED_DELIVERIES_KEPT_MS);
  const endpoints = await ctx.db
    .selectFrom('webhook_deliveries')
    .select('endpoint_id')
    .distinct()
    .where(sql<boolean>`finished_at is not null`)
    .where('finished_at', '<', cutoff)
    .execute();
  let deleted = 0;
  for (const { endpoint_id } of endpoints) {
    if (deleted >= batch) break;
    const keep = await newestDeliveries(ctx, endpoint_id, DELIVERIES_ALWAYS_KEPT);
    while (deleted < batch) {
      const chunk = Math.min(500, batch - deleted);
      const old = await ctx.db
        .selectFrom('webhook_deliveries')
        .select('event_seq')
        .where(sql<boolean>`finished_at is not null`)
        .where('finished_at', '<', cutoff)
        .where('endpoint_id', '=', endpoint_id)
        .where(sql<boolean>`manual_requested_at is null`)
        .$if(keep.length > 0, (q) => q.where('event_seq', 'not in', keep))
        .limit(chunk)
        .execute();
      if (old.length === 0) break;
      const seqs = old.map((o) => Number(o.event_seq));
      await ctx.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', endpoint_id).where('event_seq', 'in', seqs).execute();
        await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpoint_id).where('event_seq', 'in', seqs).execute();
      });
      deleted += seqs.length;
      if (old.length < chunk) break;
    }
  }
  return deleted;
}

/**
 * Workspace deletion: at most `batch` of a deleted workspace's webhook deliveries (with their
 * attempts) per call, found through its events; once none is left, its endpoints.
 */
export async function deleteWorkspaceWebhooks(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  // Deliveries not made yet are never made (the outbox is small: no index by workspace, which would cost every recording a page).
  const unsent = await deleteChosen(
    ctx.db,
    'webhook_outbox',
    'event_seq',
    ctx.db.selectFrom('webhook_outbox').select('event_seq').where('workspace_id', '=', workspaceId),
    batch,
  );
  if (unsent > 0) return unsent;
  const seqs = (
    await ctx.db
      .selectFrom('events as e')
      .select('e.seq')
      .where('e.workspace_id', '=', workspaceId)
      .where((w) => w.exists(w.selectFrom('webhook_deliveries as d').select('d.event_seq').whereRef('d.event_seq', '=', 'e.seq')))
      .limit(Math.max(1, Math.floor(batch / 10)))
      .execute()
  ).map((r) => Number(r.seq));
  if (seqs.length) {
    return ctx.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_attempts').where('event_seq', 'in', seqs).execute();
      const r = await trx.deleteFrom('webhook_deliveries').where('event_seq', 'in', seqs).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }
  const endpoints = (await ctx.db.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', workspaceId).limit(batch).execute()).map((e) => e.id);
  if (endpoints.length === 0) return 0;
  return ctx.db.transaction().execute(async (trx) => {
    // Deliveries whose events are gone already (none normally: events with deliveries are kept).
    await trx.deleteFrom('webhook_attempts').where('endpoint_id', 'in', endpoints).execute();
    await trx.deleteFrom('webhook_deliveries').where('endpoint_id', 'in', endpoints).execute();
    const r = await trx.deleteFrom('webhook_endpoints').where('id', 'in', endpoints).executeTakeFirst();
    return Number(r.numDeletedRows);
  });
}

/**
 * An inbox was deleted: the endpoints limited to it go at once (in the caller's transaction), with
 * their deliveries and attempts, so nothing more is sent to them. Returns their ids.
 */
export async function deleteInboxEndpoints(db: Db, inboxId: string): Promise<string[]> {
  const ids = (await db.selectFrom('webhook_endpoints').select('id').where('inbox_id', '=', inboxId).execute()).map((e) => e.id);
  if (ids.length === 0) return [];
  await db.deleteFrom('webhook_attempts').where('endpoint_id', 'in', ids).execute();
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', 'in', ids).execute();
  await db.deleteFrom('webhook_endpoints').where('id', 'in', ids).execute();
  return ids;
}
