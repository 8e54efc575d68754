// The outbox worker. It claims due deliveries with a lease, signs each attempt at send time, sends
// many at once (bounded in total and per endpoint), and writes results in batches: the attempt log,
// the delivery's next state (retry schedule with jitter, given up after the last retry) and the
// endpoint's failure window (disabled after 24 hours of unbroken failure, or at once on 410).
// A crash loses nothing: a delivery stays pending until its result is written, and a new process
// takes over deliveries whose lease it finds (at-least-once, same webhook-id).

import type { KeyObject } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import { Counter } from 'prom-client';
import type { Agent } from 'undici';
import type { Ctx } from '../context.js';
import { placeholders, runText } from '../db/bulk.js';
import type { EventsTable, WebhookEndpointsTable } from '../db/schema.js';
import { eventPayload } from '../events/service.js';
import { iso } from '../platform/clock.js';
import type { Drainable } from '../platform/jobs.js';
import { aloneOnDatabase } from '../platform/presence.js';
import { Pump } from '../platform/pump.js';
import { WakeWindow } from '../platform/wake-window.js';
import { liveWorkspaceIds } from '../workspaces/store.js';
import { createWebhookAgent } from './address.js';
import { ATTEMPT_HEADERS, AttemptDeadlines, attemptTarget, startAttempt } from './attempt.js';
import { type Claimed, claimDeliveries, deliveryIn, expandOutbox, type Finished, OUTBOX_EVENTS_PER_EXPANSION, paddedList, writeResults } from './deliveries.js';
import { webhookMessageId } from './outbox.js';
import { signingSecrets } from './service.js';
import { signatureValue, signedPrefix, signingKey } from './signing.js';

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
export interface DispatcherOptions {
  maxInFlight?: number;
  perEndpoint?: number;
  claimBatch?: number;
  pollMs?: number;
  /** EVENTS_WAKE_WINDOW_MS unless set. */
  eventsWakeWindowMs?: number;
}

export class WebhookDispatcher implements Drainable {
  /** Made for the first batch of attempts, so that a server without webhooks never loads undici. */
  private agent: Promise<Agent> | undefined;
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
    await (await this.agent)?.destroy();
  }

  private agentOf(): Promise<Agent> {
    // Several endpoints often share one receiver (origin); its pool holds up to a full dispatcher's worth.
    this.agent ??= createWebhookAgent({
      lookup: (host) => this.ctx.lookup(host),
      allowPrivate: this.ctx.config.webhookAllowPrivate,
      connections: CONNECTIONS_PER_ORIGIN,
    });
    return this.agent;
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
    const agent = await this.agentOf();
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
    const deps = { agent, clock, deadlines: this.deadlines };
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
