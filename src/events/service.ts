// The stored event stream. Services call recordEvent inside the same transaction as the change
// that causes the event; webhooks, GET /v1/events and the realtime socket all read this table.
import { type Selectable, sql } from 'kysely';
import type { Access } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { isPostgres } from '../db/dialect.js';
import type { Db, EventsTable } from '../db/schema.js';
import { DAY, iso } from '../platform/clock.js';
import { forbidden } from '../platform/errors.js';
import { newId } from '../platform/ids.js';
import { type EventCause, enrichEvent, type InternalSignals, reactToEvent, reactToSignal, type SignalName } from './registry.js';

/** Event types delivered to webhooks (the spec's table). */
export const WEBHOOK_EVENT_TYPES = [
  'conversation.created',
  'conversation.updated',
  'message.created',
  'feedback.created',
  'contact.updated',
  'contact.deleted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Realtime-only kinds for owners and admins; never sent to webhooks. */
export type AdminEventType = 'migration.updated' | 'migration.progress' | 'migration.forwarding_confirmation';

export interface NewEvent {
  workspaceId: string;
  /** Absent for contact events. */
  inboxId?: string | null;
  /** The contact an event concerns (inbox-limited webhooks use it for contact events). */
  contactId?: string | null;
  type: WebhookEventType | AdminEventType | (string & {});
  /** When the change happened (not when it is sent). */
  occurredAt: Date;
  data: Record<string, unknown>;
  /** message.created for a note: delivered only to endpoints with include_notes. */
  isNote?: boolean;
  /** false for events that are never sent to webhooks (internal events shown as messages, and the like). */
  webhook?: boolean;
  /** Contact events: the inboxes of the contact's conversations (its external ids' inboxes are taken from data). */
  relatedInboxIds?: readonly string[];
  /** A realtime-only event for this member alone (a notification); never sent to webhooks. */
  personId?: string | null;
  /** Who acted and what changed: for the reactions only, never stored or sent. */
  cause?: EventCause;
}

export type EventRow = Selectable<EventsTable>;

/**
 * Records one event in the caller's transaction (one is opened when the caller has none) and runs
 * the reactions of src/events/registry.ts in it (webhook deliveries, notifications, …); the
 * realtime reaction fills `online` of data.contact from the live connections now.
 * Call it in the transaction of the change, after the change. The returned seq is the row's number;
 * the position readers resume from is assigned at commit on Postgres (see streamColumn).
 */
export async function recordEvent(ctx: { db: Db; clock: Ctx['clock'] }, event: NewEvent): Promise<{ id: string; seq: number }> {
  if (!ctx.db.isTransaction) return ctx.db.transaction().execute((trx) => recordEvent({ db: trx, clock: ctx.clock }, event));
  const db = ctx.db;

  const admin = event.type.startsWith('migration.');
  const data = await enrichEvent(ctx, { type: event.type, data: event.data, workspaceId: event.workspaceId });
  const related = relatedInboxIds(event, data);
  const id = newId('evt', ctx.clock.now().getTime());
  const row = {
    id,
    workspace_id: event.workspaceId,
    inbox_id: event.inboxId ?? null,
    contact_id: event.contactId ?? null,
    type: event.type,
    occurred_at: iso(event.occurredAt),
    data: JSON.stringify(data),
    audience: admin ? ('admins' as const) : ('all' as const),
    webhook: admin || event.personId || event.webhook === false ? 0 : 1,
    is_note: event.isNote ? 1 : 0,
    related_inbox_ids: related.length ? JSON.stringify(related) : null,
    person_id: event.personId ?? null,
  };
  // Written as plain SQL: this runs once per event, and building it with the query builder cost more than running it.
  const inserted = await sql<{ seq: number }>`insert into events
    (id, workspace_id, inbox_id, contact_id, type, occurred_at, data, audience, webhook, is_note, related_inbox_ids, person_id)
    values (${row.id}, ${row.workspace_id}, ${row.inbox_id}, ${row.contact_id}, ${row.type}, ${row.occurred_at}, ${row.data},
            ${row.audience}, ${row.webhook}, ${row.is_note}, ${row.related_inbox_ids}, ${row.person_id})
    returning seq`.execute(db);
  const seq = Number(inserted.rows[0].seq);
  await reactToEvent(ctx, {
    id,
    seq,
    workspaceId: row.workspace_id,
    inboxId: row.inbox_id,
    contactId: row.contact_id,
    type: row.type,
    occurredAt: row.occurred_at,
    data,
    isNote: row.is_note === 1,
    webhook: row.webhook === 1,
    audience: row.audience,
    personId: row.person_id,
    relatedInboxIds: related,
    cause: event.cause ?? {},
  });
  return { id, seq };
}

/**
 * Records an internal signal (src/events/reaction-types.ts) in the caller's transaction: the
 * reactions that handle it store their work there. Nobody reads signals from the stream; call
 * `announceEvents` after commit so that this process's jobs look at once.
 */
export async function recordSignal<K extends SignalName>(ctx: { db: Db; clock: Ctx['clock'] }, name: K, payload: InternalSignals[K]): Promise<void> {
  if (!ctx.db.isTransaction) return ctx.db.transaction().execute((trx) => recordSignal({ db: trx, clock: ctx.clock }, name, payload));
  await reactToSignal(ctx, name, payload);
}

/** Call after the transaction that recorded events commits, so that listeners look at once. */
export function announceEvents(ctx: Pick<Ctx, 'hub'>): void {
  ctx.hub.emit('events');
}

/** The delivery payload shape of the spec: type, timestamp, workspace_id, inbox_id (absent for contact events), data. */
export function eventPayload(row: { type: string; occurred_at: string; workspace_id: string; inbox_id: string | null; data: string }) {
  const payload: Record<string, unknown> = { type: row.type, timestamp: row.occurred_at, workspace_id: row.workspace_id };
  if (row.inbox_id !== null && !row.type.startsWith('contact.')) payload.inbox_id = row.inbox_id;
  payload.data = JSON.parse(row.data);
  return payload;
}

/**
 * The column that orders the stream. On SQLite the row number: one writer, so rows commit in that
 * order. On Postgres concurrent transactions can commit out of row-number order, so migration 0003
 * gives every event a `position` at commit time (a deferred trigger, under a lock held only while
 * committing): a reader that has seen position N has seen everything below N.
 */
function streamColumn(db: Db): 'seq' | 'position' {
  return isPostgres(db) ? 'position' : 'seq';
}

/** An event's place in the stream (what clients pass as after=). */
export function streamPosition(row: Pick<EventRow, 'seq'> & { position?: number | null }): number {
  return Number(row.position ?? row.seq);
}

/** An event as GET /v1/events and the realtime socket show it: the payload plus its sequence number and id. */
export function formatStreamEvent(row: EventRow) {
  return { seq: streamPosition(row), id: row.id, ...eventPayload(row) };
}

/**
 * The inboxes an event concerns: its own inbox, and for contact events the inboxes where the contact
 * has an external id or a conversation.
 */
function relatedInboxIds(event: NewEvent, data: Record<string, unknown>): string[] {
  const out = new Set<string>(event.relatedInboxIds ?? []);
  if (event.inboxId) out.add(event.inboxId);
  const contact = data.contact as { external_ids?: unknown } | undefined;
  if (event.type.startsWith('contact.') && contact && Array.isArray(contact.external_ids)) {
    for (const x of contact.external_ids) {
      if (x && typeof x === 'object' && typeof (x as { inbox_id?: unknown }).inbox_id === 'string') out.add((x as { inbox_id: string }).inbox_id);
    }
  }
  return [...out];
}

// ---- reading the stream (GET /v1/events and GET /v1/realtime) ----

/** Who reads the stream, and so which events they see. */
export interface EventViewer {
  workspaceId: string;
  /** null: every inbox. */
  inboxIds: readonly string[] | null;
  /** Receives the admins-only kinds (migration.*). */
  admin: boolean;
  conversations: boolean;
  contacts: boolean;
  /** The signed-in member (events addressed to one member reach only them); absent for keys and visitors. */
  personId?: string | null;
}

/**
 * What a caller reads from the stream: conversation and message events with conversations:read,
 * contact events with contacts:read, limited to the caller's inboxes; the migration kinds go to
 * owners and admins (and to keys that may use the migration endpoints: no inbox limit and
 * migrations:manage).
 */
export function viewerFor(access: Access): EventViewer {
  const actor = access.actor;
  const admin = actor.kind === 'member' ? actor.role === 'owner' || actor.role === 'admin' : access.inboxIds === null && access.scopes.has('migrations:manage');
  return {
    workspaceId: access.workspaceId,
    inboxIds: access.inboxIds,
    admin,
    conversations: access.scopes.has('conversations:read'),
    contacts: access.scopes.has('contacts:read'),
    personId: actor.kind === 'member' ? actor.personId : null,
  };
}

/** 403 for a caller who may read no events at all. */
export function requireViewer(viewer: EventViewer): EventViewer {
  if (!viewer.admin && !viewer.conversations && !viewer.contacts) throw forbidden('reading events needs conversations:read or contacts:read');
  return viewer;
}

/**
 * An event addressed to one member (a notification) reaches only that member, and like every
 * conversation event only while they see its inbox: the viewer's inboxes are the current ones, so
 * a narrowed inbox limit hides what was told before.
 */
export function canSeeEvent(viewer: EventViewer, row: Pick<EventRow, 'audience' | 'type' | 'related_inbox_ids' | 'person_id'>): boolean {
  if (row.person_id) {
    if (viewer.personId !== row.person_id) return false;
    // Which of their notifications the member read: about no inbox, for every panel of theirs.
    if (row.type === 'notification.read') return true;
  } else if (row.audience === 'admins') return viewer.admin;
  else if (row.type.startsWith('contact.') ? !viewer.contacts : !viewer.conversations) return false;
  if (viewer.inboxIds === null) return true;
  const related = row.related_inbox_ids ? (JSON.parse(row.related_inbox_ids) as string[]) : [];
  return related.some((id) => viewer.inboxIds!.includes(id));
}

/** The events of these ids that exist (one statement), in no particular order. */
export async function findEvents(ctx: Pick<Ctx, 'db'>, ids: readonly string[]): Promise<EventRow[]> {
  if (ids.length === 0) return [];
  return ctx.db
    .selectFrom('events')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}

const PRUNED_THROUGH_KEY = 'events_pruned_through';

/** Events up to this sequence number may have been removed; a cursor below it has expired. */
export async function prunedThrough(ctx: Pick<Ctx, 'db'>): Promise<number> {
  const row = await ctx.db.selectFrom('server_meta').select('value').where('key', '=', PRUNED_THROUGH_KEY).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** The newest sequence number in the whole stream (0 when empty). */
export async function latestSeq(ctx: Pick<Ctx, 'db'>): Promise<number> {
  const row = await ctx.db
    .selectFrom('events')
    .select((eb) => eb.fn.max(streamColumn(ctx.db)).as('seq'))
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

export type ReadResult =
  | { expired: true; prunedThrough: number }
  | { expired: false; events: EventRow[] /** resume after this one next time */; cursor: number; more: boolean };

/**
 * The viewer's events after a sequence number, oldest first. `after` below what is kept gives
 * { expired: true }. The cursor moves past events the viewer does not see, so a reader never scans
 * them twice.
 */
export async function readEvents(ctx: Pick<Ctx, 'db'>, viewer: EventViewer, after: number | undefined, limit: number): Promise<ReadResult> {
  const horizon = await prunedThrough(ctx);
  if (after !== undefined && after < horizon) return { expired: true, prunedThrough: horizon };
  // A cursor beyond the newest event was not handed out by this server (another server, an older backup).
  if (after !== undefined && after > (await latestSeq(ctx))) return { expired: true, prunedThrough: horizon };
  let cursor = Math.max(after ?? 0, horizon);
  const out: EventRow[] = [];
  const batch = Math.max(limit, 200);
  const column = streamColumn(ctx.db);
  for (let round = 0; round < 20; round++) {
    const rows = await ctx.db
      .selectFrom('events')
      .selectAll()
      .where('workspace_id', '=', viewer.workspaceId)
      .where(column, '>', cursor)
      .orderBy(column)
      .limit(batch)
      .execute();
    for (const row of rows) {
      if (canSeeEvent(viewer, row)) {
        out.push(row);
        if (out.length === limit) return { expired: false, events: out, cursor: streamPosition(row), more: true };
      }
      cursor = streamPosition(row);
    }
    if (rows.length < batch) return { expired: false, events: out, cursor, more: false };
  }
  return { expired: false, events: out, cursor, more: true };
}

/**
 * Removes events older than SVC_EVENTS_RETENTION_DAYS. The stream is cut at one sequence number
 * (every event at or below it is older than the limit), so readers can tell an expired cursor from a
 * quiet stream. Events that a kept webhook delivery still refers to stay for its redelivery.
 */
export async function pruneEvents(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config'>,
  batch = Number.POSITIVE_INFINITY,
): Promise<{ prunedThrough: number; deleted: number }> {
  const cutoff = iso(ctx.clock.now().getTime() - ctx.config.eventsRetentionDays * DAY);
  const column = streamColumn(ctx.db);
  // One statement, so one snapshot: the events before the first recent one; with no recent event, all
  // the old ones (an event committing meanwhile is recent, and not counted).
  const cut = await sql<{ through: number | null }>`select coalesce(
      (select min(${sql.ref(column)}) - 1 from events where occurred_at >= ${cutoff}),
      (select max(${sql.ref(column)}) from events where occurred_at < ${cutoff}),
      0) as through`.execute(ctx.db);
  const through = Number(cut.rows[0]?.through ?? 0);
  const previous = await prunedThrough(ctx);
  const horizon = Math.max(previous, through);
  if (horizon > previous) {
    await ctx.db
      .insertInto('server_meta')
      .values({ key: PRUNED_THROUGH_KEY, value: String(horizon) })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: String(horizon) }))
      .execute();
  }
  let deleted = 0;
  while (deleted < batch) {
    const chunk = Math.min(5000, batch - deleted);
    const result = await ctx.db
      .deleteFrom('events')
      .where('seq', 'in', (eb) =>
        eb
          .selectFrom('events as e')
          .select('e.seq')
          .where(`e.${column}`, '<=', horizon)
          .where((w) => w.not(w.exists(w.selectFrom('webhook_deliveries as d').select('d.event_seq').whereRef('d.event_seq', '=', 'e.seq'))))
          .where((w) => w.not(w.exists(w.selectFrom('webhook_outbox as o').select('o.event_seq').whereRef('o.event_seq', '=', 'e.seq'))))
          .limit(chunk),
      )
      .executeTakeFirst();
    const n = Number(result.numDeletedRows);
    deleted += n;
    if (n < chunk) break;
  }
  return { prunedThrough: horizon, deleted };
}

/** Workspace deletion: at most `batch` of a deleted workspace's events per call (after its webhook deliveries). */
export async function deleteWorkspaceEvents(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const result = await ctx.db
    .deleteFrom('events')
    .where('seq', 'in', (eb) => eb.selectFrom('events as e').select('e.seq').where('e.workspace_id', '=', workspaceId).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Realtime-only signals (typing, viewing): a workspace's events of one type since a time, oldest
 * first (the `events_occurred` index bounds the read to that window).
 */
export async function recentEventsOfType(
  ctx: Pick<Ctx, 'db'>,
  input: { workspaceId: string; type: string; since: string },
): Promise<{ occurred_at: string; data: string }[]> {
  return ctx.db
    .selectFrom('events')
    .select(['occurred_at', 'data'])
    .where('occurred_at', '>=', input.since)
    .where('type', '=', input.type)
    .where('workspace_id', '=', input.workspaceId)
    .orderBy('seq')
    .execute();
}

/** Retention of realtime-only signals: at most `batch` events of one type that occurred before `before`. */
export async function deleteEventsOfTypeBefore(ctx: Pick<Ctx, 'db'>, type: string, before: string, batch: number): Promise<number> {
  const result = await ctx.db
    .deleteFrom('events')
    .where('seq', 'in', (eb) => eb.selectFrom('events as e').select('e.seq').where('e.type', '=', type).where('e.occurred_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
