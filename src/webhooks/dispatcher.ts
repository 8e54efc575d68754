// The outbox worker. It claims due deliveries with a lease, signs each attempt at send time, sends
// many at once (bounded in total and per endpoint), and writes results in batches: the attempt log,
// the delivery's next state (retry schedule with jitter, given up after the last retry) and the
// endpoint's failure window (disabled after 24 hours of unbroken failure, or at once on 410).
// A crash loses nothing: a delivery stays pending until its result is written, and a new process
// takes over deliveries whose lease it finds (at-least-once, same webhook-id).

import type { KeyObject } from 'node:crypto';
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import { Counter } from 'prom-client';
import type { Agent } from 'undici';
import type { Ctx } from '../context.js';
import { insertRows, placeholders, runText, updateByKeys, updateFromValues } from '../db/bulk.js';
import { isPostgres } from '../db/dialect.js';
import type { Database, Db, EventsTable, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookOutboxTable } from '../db/schema.js';
import { eventPayload } from '../events/service.js';
import { HOUR, iso, MINUTE } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import type { Drainable } from '../platform/jobs.js';
import { aloneOnDatabase } from '../platform/presence.js';
import { Pump } from '../platform/pump.js';
import { WakeWindow } from '../platform/wake-window.js';
import { liveWorkspaceIds } from '../workspaces/store.js';
import { createWebhookAgent } from './address.js';
import { ATTEMPT_HEADERS, AttemptDeadlines, type AttemptResult, attemptTarget, startAttempt } from './attempt.js';
import { deliveryIdOf, webhookMessageId } from './outbox.js';
import { signingSecrets } from './service.js';
import { signatureValue, signedPrefix, signingKey } from './signing.js';

/** Delays before retries 1..9 after a failed attempt (spec: 5 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 9 h). */
export const RETRY_SCHEDULE_MS = [5_000, MINUTE, 5 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 9 * HOUR] as const;
/** Each retry comes up to this fraction later than its slot. */
export const RETRY_JITTER = 0.1;
/** Every attempt failing for this long disables the endpoint. */
export const FAILURE_WINDOW_MS = 24 * HOUR;
/** Open connections to one origin at most. */
export const CONNECTIONS_PER_ORIGIN = 128;
/** Signing keys kept open (by sealed secret); beyond this many the cache starts over. */
const SIGNING_KEYS_KEPT = 10_000;
/**
 * Finished attempts are written together once this many have gathered, or this long after the first
 * of them finished: a larger transaction writes fewer pages per delivery (rows share pages), and the
 * deliveries stay leased (so never sent twice) until it commits.
 */
const FLUSH_RESULTS = 1024;
const FLUSH_DELAY_MS = 50;
/** Wake-ups this close together are handled as one. */
const WAKE_DELAY_MS = 5;
/**
 * Committed events (every group-commit flush under inbound mail, most of them with no delivery to
 * make) wake the dispatcher at most once per this long; the poll finds what other processes stored.
 */
export const EVENTS_WAKE_WINDOW_MS = 20;
/** Outbox rows (events) made into deliveries at most per transaction. */
const OUTBOX_EVENTS_PER_EXPANSION = 64;
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

interface Finished {
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
function deliveryIn(eb: ExpressionBuilder<Database, 'webhook_deliveries'>, ds: { event_seq: number; endpoint_id: string }[]) {
  return eb(
    eb.refTuple('event_seq', 'endpoint_id'),
    'in',
    ds.map((d) => eb.tuple(d.event_seq, d.endpoint_id)),
  );
}

export interface DispatcherOptions {
  maxInFlight?: number;
  perEndpoint?: number;
  claimBatch?: number;
  pollMs?: number;
  /** EVENTS_WAKE_WINDOW_MS unless set. */
  eventsWakeWindowMs?: number;
}

export class WebhookDispatcher implements Drainable {
  readonly agent: Agent;
  private readonly maxInFlight: number;
  private readonly perEndpoint: number;
  private readonly claimBatch: number;
  private readonly pollMs: number;
  /** Attempts under way, and who waits for none to be. */
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private attemptsEnded = 0;
  private readonly deadlines = new AttemptDeadlines();
  private filling = new Set<Promise<number>>();
  private endpointLoad = new Map<string, number>();
  private readonly signingKeys = new Map<string, KeyObject>();
  private results: Finished[] = [];
  private writing: Promise<void> = Promise.resolve();
  private flushTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Claims are made in batches: refill once half the room is free (or nothing is under way). */
  private readonly pump = new Pump(
    async () => {
      while (!this.stopped && this.inFlight <= this.maxInFlight / 2 && (await this.fill()) > 0);
    },
    { active: () => !this.stopped, onError: (error) => this.ctx.log.error('webhook outbox unavailable', { error }) },
  );
  private readonly eventWakes: WakeWindow;
  /** The outbox may hold events (one was recorded here, or a poll may find another process's). */
  private outboxMayHold = true;
  private readonly onEvents = () => {
    this.outboxMayHold = true;
    this.eventWakes.wake();
  };
  /**
   * Scheduled deliveries may be due: at start, on every poll (another process's rows, leases run
   * out), after an expansion wrote some due, after a claim that filled its room or skipped busy
   * endpoints, and when a retry this process wrote comes due. Otherwise a fill skips the claim of
   * due rows (a statement per fill while the outbox supplies everything).
   */
  private dueMayHold = true;
  /** When the retries this process wrote come due (ms by ctx.clock), earliest first. */
  private retriesDue: number[] = [];
  /** Redeliveries are looked for when one was asked for here, and on every poll (another process may have asked). */
  private lookForManual = true;
  private readonly onRedelivery = () => {
    this.lookForManual = true;
    this.wake();
  };
  private readonly attemptsSucceeded: Counter.Internal;
  private readonly attemptsFailed: Counter.Internal;

  constructor(
    private readonly ctx: Ctx,
    opts: DispatcherOptions = {},
  ) {
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.perEndpoint = opts.perEndpoint ?? 32;
    this.claimBatch = opts.claimBatch ?? 200;
    this.pollMs = opts.pollMs ?? 1000;
    this.eventWakes = new WakeWindow(() => this.wake(), opts.eventsWakeWindowMs ?? EVENTS_WAKE_WINDOW_MS);
    // Several endpoints often share one receiver (origin); its pool holds up to a full dispatcher's worth.
    this.agent = createWebhookAgent({ lookup: (host) => ctx.lookup(host), allowPrivate: ctx.config.webhookAllowPrivate, connections: CONNECTIONS_PER_ORIGIN });
    const attemptsTotal = new Counter({
      name: 'svc_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome.',
      labelNames: ['outcome'] as const,
      registers: [ctx.metrics.registry],
    });
    this.attemptsSucceeded = attemptsTotal.labels({ outcome: 'succeeded' });
    this.attemptsFailed = attemptsTotal.labels({ outcome: 'failed' });
  }

  async start(): Promise<void> {
    // Deliveries a previous process had under way (killed mid-delivery) are due at once instead of
    // when their lease runs out, unless another server runs: then the leases may be its own.
    if (await aloneOnDatabase(this.ctx)) {
      const now = iso(this.ctx.clock.now());
      await this.ctx.db
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: now, lease_until: null })
        .where('lease_until', 'is not', null)
        .where(sql<boolean>`status = 'pending'`)
        .execute();
      await this.ctx.db.updateTable('webhook_deliveries').set({ lease_until: null }).where('lease_until', 'is not', null).execute();
    }
    this.stopped = false;
    this.ctx.hub.on('events', this.onEvents);
    this.ctx.hub.on('webhooks', this.onRedelivery);
    const poll = () => {
      this.pollTimer = setTimeout(() => {
        this.lookForManual = true;
        this.dueMayHold = true;
        this.outboxMayHold = true;
        this.wake();
        poll();
      }, this.pollMs);
      this.pollTimer.unref();
    };
    poll();
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.ctx.hub.off('events', this.onEvents);
    this.ctx.hub.off('webhooks', this.onRedelivery);
    clearTimeout(this.pollTimer);
    clearTimeout(this.wakeTimer);
    this.eventWakes.cancel();
    await this.idle();
    await this.flush();
    // Attempts have all ended (each by its deadline at the latest); a connection still being set up
    // for one that lost the race to its deadline is dropped rather than waited for.
    await this.agent.destroy();
  }

  /**
   * Looks for due work soon. Wake-ups within WAKE_DELAY_MS are taken together, so that a steady
   * flow of events is claimed in batches rather than one event's deliveries at a time.
   */
  wake(): void {
    if (this.stopped || this.wakeTimer) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.pump.run();
    }, WAKE_DELAY_MS);
  }

  /** Sends everything due now, waits for attempts under way and their results to be written. */
  async drain(): Promise<number> {
    let done = 0;
    for (;;) {
      // A claim made by the live loop may not have started its attempts yet.
      await Promise.allSettled([...this.filling]);
      this.lookForManual = true;
      this.outboxMayHold = true;
      this.dueMayHold = true;
      const started = await this.fill();
      if (started === 0 && this.inFlight === 0 && this.filling.size === 0) break;
      const endedBefore = this.attemptsEnded;
      await this.idle();
      done += this.attemptsEnded - endedBefore;
      await this.flush();
    }
    await this.flush();
    return done;
  }

  /** Claims as much due work as there is room for and starts it; returns how many attempts started. */
  private fill(): Promise<number> {
    const p = this.claimAndStart().finally(() => this.filling.delete(p));
    this.filling.add(p);
    return p;
  }

  private async claimAndStart(): Promise<number> {
    const room = Math.min(this.maxInFlight - this.inFlight, this.claimBatch);
    if (room <= 0) return 0;
    const busy = [...this.endpointLoad].filter(([, n]) => n >= this.perEndpoint).map(([id]) => id);
    const claimed: Claimed[] = [];
    if (this.dueMayHold || this.retryDue()) {
      this.dueMayHold = false;
      claimed.push(...(await this.claim(room, busy, false)));
      // A full claim may leave more behind; a busy endpoint's due rows were left.
      if (claimed.length === room || busy.length) this.dueMayHold = true;
    }
    if (claimed.length < room && this.outboxMayHold) {
      // Claimed rows are not counted in endpointLoad until they start.
      const load = new Map(this.endpointLoad);
      for (const c of claimed) load.set(c.endpoint_id, (load.get(c.endpoint_id) ?? 0) + 1);
      const taken = await expandOutbox(this.ctx, { room: room - claimed.length, load, perEndpoint: this.perEndpoint, maxEvents: OUTBOX_EVENTS_PER_EXPANSION });
      if (!taken.more) this.outboxMayHold = false;
      if (taken.due) this.dueMayHold = true;
      if (taken.failed) this.ctx.metrics.webhookDeliveries.inc({ outcome: 'failed' }, taken.failed);
      claimed.push(...taken.claimed);
    }
    if (claimed.length < room && this.lookForManual) {
      this.lookForManual = false;
      const manual = await this.claim(room - claimed.length, busy, true);
      // A full batch may leave more behind.
      if (manual.length === room - claimed.length) this.lookForManual = true;
      claimed.push(...manual);
    }
    if (claimed.length === 0) return 0;
    await this.startAll(claimed);
    return claimed.length;
  }

  /** Whether a retry written here is due now; those due are forgotten (the claim that follows takes them). */
  private retryDue(): boolean {
    if (this.retriesDue.length === 0) return false;
    const now = this.ctx.clock.now().getTime();
    if (this.retriesDue[0]! > now) return false;
    this.retriesDue = this.retriesDue.filter((at) => at > now);
    return true;
  }

  private claim(limit: number, busyEndpoints: string[], manual: boolean): Promise<Claimed[]> {
    return claimDeliveries(this.ctx, { limit, busyEndpoints, manual });
  }

  private async startAll(claimed: Claimed[]): Promise<void> {
    const { db, clock } = this.ctx;
    const endpointIds = [...new Set(claimed.map((c) => c.endpoint_id))];
    const seqs = [...new Set(claimed.map((c) => c.event_seq))];
    // Endpoints of live workspaces only: nothing more is sent for a deleted workspace.
    const endpointList = paddedList(endpointIds);
    const endpointRows = await runText<Selectable<WebhookEndpointsTable>>(
      db,
      `webhooks.endpoints|${endpointList.length}`,
      () => `select * from webhook_endpoints where id in (${placeholders(endpointList.length)})`,
      endpointList,
    );
    const live = await liveWorkspaceIds(
      db,
      endpointRows.map((e) => e.workspace_id),
    );
    const endpoints = new Map(endpointRows.filter((e) => live.has(e.workspace_id)).map((e) => [e.id, e]));
    const orphans = claimed.filter((d) => !endpoints.has(d.endpoint_id));
    if (orphans.length)
      await db
        .deleteFrom('webhook_deliveries')
        .where((eb) => deliveryIn(eb, orphans))
        .execute();
    const seqList = paddedList(seqs);
    const eventRows = await runText<Pick<Selectable<EventsTable>, 'seq' | 'id' | 'type' | 'occurred_at' | 'workspace_id' | 'inbox_id' | 'data'>>(
      db,
      `webhooks.events|${seqList.length}`,
      () => `select seq, id, type, occurred_at, workspace_id, inbox_id, data from events where seq in (${placeholders(seqList.length)})`,
      seqList,
    );
    const events = new Map(eventRows.map((e) => [Number(e.seq), e]));
    const now = clock.now();
    // Per endpoint and per event once a batch: signing keys, where to send, the body's bytes.
    const keys = new Map([...endpoints.values()].map((e) => [e.id, signingSecrets((sealed) => this.signingKeyOf(sealed), e, now)]));
    const targets = new Map([...endpoints.values()].map((e) => [e.id, attemptTarget(e.url)]));
    const messages = new Map<number, { body: Buffer; msgId: string; prefix: string }>();
    // The batch's attempts start together: one start time (and signature timestamp) for all.
    const startedAt = now;
    const startedAtText = iso(startedAt);
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const timestampText = String(timestamp);
    const deps = { agent: this.agent, clock, deadlines: this.deadlines };
    for (const d of claimed) {
      const endpoint = endpoints.get(d.endpoint_id);
      const event = events.get(d.event_seq);
      if (!endpoint || !event) continue; // deleted meanwhile (the delivery went with it)
      let message = messages.get(d.event_seq);
      if (message === undefined) {
        const msgId = webhookMessageId(d.event_id);
        message = { body: Buffer.from(JSON.stringify(eventPayload(event))), msgId, prefix: signedPrefix(msgId, timestamp) };
        messages.set(d.event_seq, message);
      }
      const { body } = message;
      // A flat list of names and values: undici takes it as it is (a record costs an object and its keys per attempt).
      const headers = [
        'content-type',
        ATTEMPT_HEADERS['content-type'],
        'user-agent',
        ATTEMPT_HEADERS['user-agent'],
        'webhook-id',
        message.msgId,
        'webhook-timestamp',
        timestampText,
        'webhook-signature',
        signatureValue(keys.get(endpoint.id)!, message.prefix, body),
      ];
      this.endpointLoad.set(d.endpoint_id, (this.endpointLoad.get(d.endpoint_id) ?? 0) + 1);
      this.inFlight++;
      startAttempt(deps, { target: targets.get(endpoint.id)!, headers, body }, (result) =>
        this.finished({ delivery: d, startedAt, startedAtText, finishedAt: clock.now(), result }),
      );
    }
  }

  /** Resolves once no attempt is under way. */
  private idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** An attempt's end is always a result (startAttempt never throws). */
  private finished(f: Finished): void {
    this.inFlight--;
    this.attemptsEnded++;
    const endpointId = f.delivery.endpoint_id;
    const left = (this.endpointLoad.get(endpointId) ?? 1) - 1;
    if (left > 0) this.endpointLoad.set(endpointId, left);
    else this.endpointLoad.delete(endpointId);
    (f.result.succeeded ? this.attemptsSucceeded : this.attemptsFailed).inc();
    this.results.push(f);
    this.scheduleFlush();
    this.wake();
    if (this.inFlight === 0 && this.idleWaiters.length) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * Opening a sealed secret costs more than signing with it, so keys are kept by sealed value (a
   * rotated secret is a new sealed value; the previous one ages out through signingSecrets).
   */
  private signingKeyOf(sealed: string): KeyObject {
    let key = this.signingKeys.get(sealed);
    if (!key) {
      if (this.signingKeys.size >= SIGNING_KEYS_KEPT) this.signingKeys.clear();
      key = signingKey(this.ctx.sealer.open(sealed));
      this.signingKeys.set(sealed, key);
    }
    return key;
  }

  private scheduleFlush(): void {
    if (this.results.length >= FLUSH_RESULTS) {
      void this.flush();
      return;
    }
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes the results gathered so far (one transaction); resolves when everything gathered is written. */
  flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.results;
    this.results = [];
    if (batch.length === 0) return this.writing;
    this.writing = this.writing
      .then(() => this.ctx.db.transaction().execute((trx) => writeResults({ ...this.ctx, db: trx }, batch, { checkExisting: false })))
      // A delivery removed meanwhile (its endpoint was deleted) fails the batch; write it again without those.
      .catch(() => this.ctx.db.transaction().execute((trx) => writeResults({ ...this.ctx, db: trx }, batch, { checkExisting: true })))
      .then((tally) => {
        if (tally.retryTimes.length) this.retriesDue = [...this.retriesDue, ...tally.retryTimes].sort((a, b) => a - b);
        for (const outcome of ['succeeded', 'retried', 'failed'] as const)
          if (tally[outcome]) this.ctx.metrics.webhookDeliveries.inc({ outcome }, tally[outcome]);
      })
      .catch((error) => {
        // The deliveries stay pending and leased; when the lease runs out they are sent again.
        this.ctx.log.error('webhook results not written', { error, count: batch.length });
      });
    return this.writing;
  }
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
function paddedList<T>(values: readonly T[]): T[] {
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
