// The dispatcher's statements (dispatcher.ts runs them): outbox rows made into deliveries, due
// deliveries claimed with a lease, and a batch of attempt results written (the attempt log, the
// retry schedule with jitter, the endpoint's failure window). The retry and disable rules are here.
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import type { Ctx } from '../context.js';
import { insertRows, placeholders, runText, updateByKeys, updateFromValues } from '../db/bulk.js';
import { isPostgres } from '../db/dialect.js';
import type { Database, Db, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookOutboxTable } from '../db/schema.js';
import { HOUR, iso, MINUTE } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import type { AttemptResult } from './attempt.js';
import { deliveryIdOf } from './outbox.js';

/** Delays before retries 1..9 after a failed attempt (spec: 5 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 9 h). */
export const RETRY_SCHEDULE_MS = [5_000, MINUTE, 5 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 9 * HOUR] as const;
/** Each retry comes up to this fraction later than its slot. */
export const RETRY_JITTER = 0.1;
/** Every attempt failing for this long disables the endpoint. */
export const FAILURE_WINDOW_MS = 24 * HOUR;
/** Outbox rows (events) made into deliveries at most per transaction. */
export const OUTBOX_EVENTS_PER_EXPANSION = 64;
/** How long a claimed delivery stays with its dispatcher before another may take it. */
export const LEASE_MS = 2 * MINUTE;

export const DISABLED_FAILING = 'every delivery attempt failed for 24 hours';
export const DISABLED_GONE = 'the receiver answered 410 Gone';

/** Delay before the retry that follows failed attempt `attempt` (1-based), or undefined when none is left. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_SCHEDULE_MS[attempt - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + RETRY_JITTER * random()));
}

export interface Claimed {
  endpoint_id: string;
  workspace_id: string;
  event_seq: number;
  event_id: string;
  attempts: number;
  manual: boolean;
}

export interface Finished {
  delivery: Claimed;
  startedAt: Date;
  /** startedAt as stored (one text per claimed batch). */
  startedAtText: string;
  finishedAt: Date;
  result: AttemptResult;
}

const ATTEMPT_COLUMNS = [
  'id',
  'event_seq',
  'endpoint_id',
  'event_id',
  'workspace_id',
  'attempt',
  'manual',
  'started_at',
  'duration_ms',
  'outcome',
  'status_code',
  'response',
  'error',
] as const satisfies readonly (keyof WebhookAttemptsTable)[];
/** Postgres types of ATTEMPT_COLUMNS (rows go as one array per column). */
const ATTEMPT_TYPES = ['text', 'bigint', 'text', 'text', 'text', 'integer', 'integer', 'text', 'integer', 'text', 'integer', 'text', 'text'];
/** A delivery's key, with its Postgres types. */
const DELIVERY_KEY = { keyColumns: ['event_seq', 'endpoint_id'], keyTypes: ['bigint', 'text'] };

const keyOf = (d: { event_seq: number; endpoint_id: string }) => `${d.event_seq}:${d.endpoint_id}`;

/** WHERE (event_seq, endpoint_id) IN (…) for a list of deliveries. */
export function deliveryIn(eb: ExpressionBuilder<Database, 'webhook_deliveries'>, ds: { event_seq: number; endpoint_id: string }[]) {
  return eb(
    eb.refTuple('event_seq', 'endpoint_id'),
    'in',
    ds.map((d) => eb.tuple(d.event_seq, d.endpoint_id)),
  );
}

const DELIVERY_COLUMNS = [
  'event_seq',
  'endpoint_id',
  'workspace_id',
  'event_id',
  'status',
  'next_attempt_at',
  'lease_until',
  'finished_at',
  'created_at',
] as const satisfies readonly (keyof WebhookDeliveriesTable)[];
const DELIVERY_TYPES = ['bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text'];

/**
 * Makes outbox rows (one per event, src/webhooks/outbox.ts) into delivery rows, oldest events first,
 * in one transaction: the outbox rows go and their deliveries come together, so a crash loses or
 * repeats none. Deliveries that fit in `room` (and whose endpoint has fewer than `perEndpoint` under
 * way, counting `load`) are written claimed, with a lease, and returned to be sent now; the others
 * are written due (all of them when `room` is 0). An endpoint deleted meanwhile gets none; one
 * disabled since the event was recorded (the outbox lists enabled endpoints only) gets the delivery
 * as failed, as disabling ends open deliveries. On Postgres the outbox rows are locked SKIP LOCKED, so dispatchers of several
 * processes take different events. `more`: the outbox may hold more events.
 */
export async function expandOutbox(
  ctx: Pick<Ctx, 'clock'> & { db: Db },
  opts: { room: number; load: Map<string, number>; perEndpoint: number; maxEvents: number },
): Promise<{ claimed: Claimed[]; failed: number; due: number; more: boolean }> {
  const postgres = isPostgres(ctx.db);
  return ctx.db.transaction().execute(async (trx) => {
    // Which events (narrow rows); then those taken, deleted with their contents returned.
    const candidates = await runText<{ event_seq: number | string; endpoint_count: number }>(
      trx,
      'webhooks.outbox',
      () => `select event_seq, endpoint_count from webhook_outbox order by event_seq limit cast(? as integer)${postgres ? ' for update skip locked' : ''}`,
      [opts.maxEvents],
    );
    if (candidates.length === 0) return { claimed: [], failed: 0, due: 0, more: false };
    // Whole events, as many as the room takes (at least one); with no room, every candidate (made due).
    const fits = opts.room > 0 ? opts.room : Number.POSITIVE_INFINITY;
    let taken = 0;
    let deliveries = 0;
    while (taken < candidates.length && (taken === 0 || deliveries + Number(candidates[taken]!.endpoint_count) <= fits)) {
      deliveries += Number(candidates[taken]!.endpoint_count);
      taken++;
    }
    const seqList = paddedList(candidates.slice(0, taken).map((e) => Number(e.event_seq)));
    const events = (
      await runText<Omit<Selectable<WebhookOutboxTable>, 'endpoint_count'>>(
        trx,
        `webhooks.outbox.take|${seqList.length}`,
        () =>
          `delete from webhook_outbox where event_seq in (${placeholders(seqList.length)}) returning event_seq, workspace_id, event_id, endpoint_ids, created_at`,
        seqList,
      )
    ).sort((a, b) => Number(a.event_seq) - Number(b.event_seq));
    const endpointIds = paddedList([...new Set(events.flatMap((e) => e.endpoint_ids.split(',')))]);
    const endpoints = new Map(
      (
        await runText<{ id: string; disabled_at: string | null }>(
          trx,
          `webhooks.outbox.endpoints|${endpointIds.length}`,
          () => `select id, disabled_at from webhook_endpoints where id in (${placeholders(endpointIds.length)})`,
          endpointIds,
        )
      ).map((e) => [e.id, e.disabled_at]),
    );
    const now = ctx.clock.now();
    const nowText = iso(now);
    const lease = iso(now.getTime() + LEASE_MS);
    const rows: unknown[][] = [];
    const claimed: Claimed[] = [];
    let failed = 0;
    let due = 0;
    for (const e of events) {
      const seq = Number(e.event_seq);
      for (const endpointId of e.endpoint_ids.split(',')) {
        const disabledAt = endpoints.get(endpointId);
        if (disabledAt === undefined) continue; // deleted
        if (disabledAt !== null) {
          rows.push([seq, endpointId, e.workspace_id, e.event_id, 'failed', null, null, nowText, e.created_at]);
          failed++;
          continue;
        }
        const load = opts.load.get(endpointId) ?? 0;
        if (claimed.length < opts.room && load < opts.perEndpoint) {
          opts.load.set(endpointId, load + 1);
          rows.push([seq, endpointId, e.workspace_id, e.event_id, 'pending', lease, lease, null, e.created_at]);
          claimed.push({ endpoint_id: endpointId, workspace_id: e.workspace_id, event_seq: seq, event_id: e.event_id, attempts: 0, manual: false });
        } else {
          // Due since the event was recorded: older events stay first in the due order.
          rows.push([seq, endpointId, e.workspace_id, e.event_id, 'pending', e.created_at, null, null, e.created_at]);
          due++;
        }
      }
    }
    await insertRows(trx, 'webhook_deliveries', DELIVERY_COLUMNS, rows, DELIVERY_TYPES);
    return { claimed, failed, due, more: candidates.length === opts.maxEvents || taken < candidates.length };
  });
}

/**
 * Takes due deliveries with a lease (scheduled ones, or those a redelivery was asked for). A
 * scheduled claim also moves next_attempt_at to the end of the lease (a visibility timeout): the due
 * index then never holds deliveries under way, and one whose dispatcher died is due again when the
 * lease runs out. The statement's text is built once per shape (kind, dialect, padded busy list).
 * On Postgres the candidates are locked with SKIP LOCKED: dispatchers of other processes claiming at
 * the same moment take the next rows instead of waiting for this claim's locks and then finding
 * them taken.
 */
export async function claimDeliveries(
  ctx: Pick<Ctx, 'clock'> & { db: Db },
  opts: { limit: number; busyEndpoints: readonly string[]; manual: boolean },
): Promise<Claimed[]> {
  const { manual } = opts;
  const now = ctx.clock.now();
  const nowText = iso(now);
  const lease = iso(now.getTime() + LEASE_MS);
  const busy = opts.busyEndpoints.length ? paddedList(opts.busyEndpoints) : [];
  const postgres = isPostgres(ctx.db);
  // Postgres reads the candidates once (a materialized CTE): as an IN subquery the planner may
  // run it again per row, and a locking subquery run again skips rows this statement has just
  // claimed and returns the next ones, so more than `limit` would be taken.
  const candidateParams = manual ? [...busy, opts.limit] : [nowText, ...busy, opts.limit];
  const setParams = manual ? [lease] : [lease, lease];
  const whereParams = manual ? [nowText] : [nowText, nowText];
  const rows = await runText<{ endpoint_id: string; workspace_id: string; event_seq: number | string; event_id: string; attempts: number }>(
    ctx.db,
    `webhooks.claim|${manual}|${busy.length}`,
    () => {
      const notBusy = busy.length ? `and d.endpoint_id not in (${placeholders(busy.length)})` : '';
      const candidates = manual
        ? `select d.event_seq, d.endpoint_id from webhook_deliveries d
           where d.manual_requested_at is not null ${notBusy} order by d.manual_requested_at limit ?`
        : `select d.event_seq, d.endpoint_id from webhook_deliveries d
           where d.status = 'pending' and d.next_attempt_at <= ? ${notBusy} order by d.next_attempt_at limit ?`;
      // Checked again on the row itself: a concurrent dispatcher's claim wins, never both.
      const update = (chosen: string) => `update webhook_deliveries set lease_until = ?${manual ? '' : ', next_attempt_at = ?'}
        where (event_seq, endpoint_id) in (${chosen})
          and (lease_until is null or lease_until < ?)
          ${manual ? '' : "and status = 'pending' and next_attempt_at <= ?"}
        returning endpoint_id, workspace_id, event_seq, event_id, attempts`;
      return postgres
        ? `with candidates as materialized (${candidates} for update skip locked) ${update('select event_seq, endpoint_id from candidates')}`
        : update(candidates);
    },
    postgres ? [...candidateParams, ...setParams, ...whereParams] : [...setParams, ...candidateParams, ...whereParams],
  );
  return rows.map((r) => ({
    endpoint_id: r.endpoint_id,
    workspace_id: r.workspace_id,
    event_seq: Number(r.event_seq),
    event_id: r.event_id,
    attempts: Number(r.attempts),
    manual,
  }));
}

/** An IN list padded to a power of two by repeating its last value: the same rows, and few statement texts for any length. */
export function paddedList<T>(values: readonly T[]): T[] {
  let length = 1;
  while (length < values.length) length <<= 1;
  return [...values, ...Array<T>(length - values.length).fill(values[values.length - 1])];
}

/** Deliveries a batch of results settled: finished well, scheduled again, or ended as failed. */
export interface DeliveryTally {
  succeeded: number;
  retried: number;
  failed: number;
  /** When the retries written come due (ms). */
  retryTimes: number[];
}

/** Applies a batch of attempt results: attempt log, delivery states, endpoint failure windows. */
export async function writeResults(ctx: Pick<Ctx, 'clock' | 'log'> & { db: Db }, batch: Finished[], opts: { checkExisting: boolean }): Promise<DeliveryTally> {
  const tally: DeliveryTally = { succeeded: 0, retried: 0, failed: 0, retryTimes: [] };
  const { db, clock, log } = ctx;
  const now = clock.now();
  const nowText = iso(now);
  let kept = [...batch].sort((a, b) => a.finishedAt.getTime() - b.finishedAt.getTime());
  if (opts.checkExisting) {
    const existing = new Set<string>();
    for (let i = 0; i < kept.length; i += 200) {
      const chunk = kept.slice(i, i + 200).map((f) => f.delivery);
      for (const r of await db
        .selectFrom('webhook_deliveries')
        .select(['event_seq', 'endpoint_id'])
        .where((eb) => deliveryIn(eb, chunk))
        .execute()) {
        existing.add(keyOf({ event_seq: Number(r.event_seq), endpoint_id: r.endpoint_id }));
      }
    }
    kept = kept.filter((f) => existing.has(keyOf(f.delivery)));
  }
  if (kept.length === 0) return tally;

  // Attempt log.
  const attemptRows = kept.map((f) => [
    newId('wha', f.startedAt.getTime()),
    f.delivery.event_seq,
    f.delivery.endpoint_id,
    f.delivery.event_id,
    f.delivery.workspace_id,
    f.delivery.manual ? null : f.delivery.attempts + 1,
    f.delivery.manual ? 1 : 0,
    f.startedAtText,
    f.result.durationMs,
    f.result.succeeded ? 'succeeded' : 'failed',
    f.result.statusCode,
    f.result.response,
    f.result.error,
  ]);
  await insertRows(db, 'webhook_attempts', ATTEMPT_COLUMNS, attemptRows, ATTEMPT_TYPES);

  // Endpoint failure windows, in the order the attempts finished.
  const endpointIds = [...new Set(kept.map((f) => f.delivery.endpoint_id))];
  const endpoints = new Map(
    (await db.selectFrom('webhook_endpoints').select(['id', 'failing_since', 'disabled_at']).where('id', 'in', paddedList(endpointIds)).execute()).map((e) => [
      e.id,
      { ...e, before: e.failing_since, disableReason: null as string | null },
    ]),
  );
  for (const f of kept) {
    const e = endpoints.get(f.delivery.endpoint_id);
    if (!e) continue;
    if (f.result.succeeded) {
      e.failing_since = null;
      continue;
    }
    e.failing_since ??= f.startedAtText;
    if (e.disabled_at || e.disableReason) continue;
    if (f.result.gone) e.disableReason = DISABLED_GONE;
    else if (f.finishedAt.getTime() - Date.parse(e.failing_since) >= FAILURE_WINDOW_MS) e.disableReason = DISABLED_FAILING;
  }
  for (const e of endpoints.values()) {
    if (e.disableReason) {
      await db
        .updateTable('webhook_endpoints')
        .set({ disabled_at: nowText, disabled_reason: e.disableReason, failing_since: e.failing_since, updated_at: nowText })
        .where('id', '=', e.id)
        .where('disabled_at', 'is', null)
        .execute();
      // Nothing more is sent to a disabled endpoint; its open deliveries end here (they can be redelivered by hand).
      const ended = await db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', next_attempt_at: null, finished_at: nowText })
        .where('endpoint_id', '=', e.id)
        .where(sql<boolean>`status = 'pending'`)
        .executeTakeFirst();
      tally.failed += Number(ended.numUpdatedRows);
      log.warn('webhook endpoint disabled', { endpoint_id: e.id, reason: e.disableReason });
    } else if (e.failing_since !== e.before) {
      await db.updateTable('webhook_endpoints').set({ failing_since: e.failing_since }).where('id', '=', e.id).execute();
    }
  }

  // Delivery states.
  const succeeded = kept.filter((f) => f.result.succeeded);
  const scheduledOk = succeeded.filter((f) => !f.delivery.manual).map((f) => f.delivery);
  tally.succeeded += succeeded.length;
  await updateByKeys(
    db,
    'webhook_deliveries',
    {
      assignments: "status = 'succeeded', attempts = attempts + 1, next_attempt_at = null, lease_until = null, last_attempt_at = ?, finished_at = ?",
      values: [nowText, nowText],
      ...DELIVERY_KEY,
    },
    scheduledOk.map((d) => [d.event_seq, d.endpoint_id]),
  );
  // Manual attempts, retries and given-up deliveries: a few multi-row statements, whatever the number
  // of failures (a receiver that is down fails a whole batch).
  const manualSucceeded: unknown[][] = [];
  const manualFailed: unknown[][] = [];
  const retried: unknown[][] = [];
  const givenUp: unknown[][] = [];
  for (const f of kept) {
    const d = f.delivery;
    const disabled = Boolean(endpoints.get(d.endpoint_id)?.disabled_at || endpoints.get(d.endpoint_id)?.disableReason);
    if (d.manual) {
      // One manual attempt: it ends the delivery only by succeeding; it never changes the schedule.
      (f.result.succeeded ? manualSucceeded : manualFailed).push([d.event_seq, d.endpoint_id]);
      continue;
    }
    if (f.result.succeeded) continue;
    const attempt = d.attempts + 1;
    const delay = disabled ? undefined : retryDelayMs(attempt);
    // A delivery of a disabled endpoint was counted as failed when the endpoint's deliveries ended.
    if (delay === undefined && !disabled) tally.failed++;
    else if (delay !== undefined) tally.retried++;
    if (delay === undefined) {
      givenUp.push([d.event_seq, d.endpoint_id, attempt]);
      if (!disabled)
        log.warn('webhook delivery given up', { endpoint_id: d.endpoint_id, delivery_id: deliveryIdOf(d.event_id), attempts: attempt, error: f.result.error });
    } else {
      const nextAt = f.finishedAt.getTime() + delay;
      tally.retryTimes.push(nextAt);
      const next = iso(nextAt);
      retried.push([d.event_seq, d.endpoint_id, attempt, next]);
      log.info('webhook attempt failed, retrying', {
        endpoint_id: d.endpoint_id,
        delivery_id: deliveryIdOf(d.event_id),
        attempt,
        status_code: f.result.statusCode,
        error: f.result.error,
        next_attempt_at: next,
      });
    }
  }
  await updateByKeys(
    db,
    'webhook_deliveries',
    {
      assignments: "status = 'succeeded', next_attempt_at = null, finished_at = ?, manual_requested_at = null, lease_until = null, last_attempt_at = ?",
      values: [nowText, nowText],
      ...DELIVERY_KEY,
    },
    manualSucceeded,
  );
  await updateByKeys(
    db,
    'webhook_deliveries',
    { assignments: 'manual_requested_at = null, lease_until = null, last_attempt_at = ?', values: [nowText], ...DELIVERY_KEY },
    manualFailed,
  );
  await updateFromValues(
    db,
    'webhook_deliveries',
    {
      assignments: 'attempts = v.column3, next_attempt_at = v.column4, lease_until = null, last_attempt_at = ?',
      values: [nowText],
      keyColumns: DELIVERY_KEY.keyColumns,
      types: ['bigint', 'text', 'integer', 'text'],
      where: "webhook_deliveries.status = 'pending'",
    },
    retried,
  );
  await updateFromValues(
    db,
    'webhook_deliveries',
    {
      assignments: "status = 'failed', attempts = v.column3, next_attempt_at = null, lease_until = null, last_attempt_at = ?, finished_at = ?",
      values: [nowText, nowText],
      keyColumns: DELIVERY_KEY.keyColumns,
      types: ['bigint', 'text', 'integer'],
    },
    givenUp,
  );
  return tally;
}
