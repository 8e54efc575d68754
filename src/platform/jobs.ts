// Durable background work. Anything that must happen later is a `jobs` row first and work second;
// a worker claims a row with a lease, so after a crash the lease runs out and the job runs again.
import { sql } from 'kysely';
import { reusableInsert } from '../db/reusable-query.js';
import type { Db } from '../db/schema.js';
import type { Clock } from './clock.js';
import { iso } from './clock.js';
import { newId } from './ids.js';
import type { Logger } from './log.js';
import { ageSeconds, databaseGauge, type Metrics } from './metrics.js';
import { WakeWindow } from './wake-window.js';

export interface JobRow {
  id: string;
  kind: string;
  payload: unknown;
  attempts: number;
}

export type JobOutcome = void | { retryAt: Date };

export interface JobKind<P = any> {
  kind: string;
  run(payload: P, job: JobRow): Promise<JobOutcome>;
  /** How long a claim lasts before another worker may take the job over. */
  leaseMs?: number;
  /** Retry delay after attempt n (1-based) threw; undefined means give up. */
  backoffMs?: (attempt: number) => number | undefined;
  /** Called once when the job is given up after its last failed attempt. */
  onGiveUp?(payload: P, error: unknown): Promise<void>;
  /** For periodic work: the job is kept and run again this long after each run. */
  everyMs?: number;
  /**
   * Runs many due jobs of this kind at once, in the order they were stored: they are claimed with
   * one statement (up to `batchSize`) and removed with one when it returns (each is done: no
   * retryAt). When it throws, each job is run alone with `run`, so only the ones that fail by
   * themselves are retried; a batch must therefore be safe to run again (stored in one
   * transaction, or idempotent). A batch that stores its work in a transaction of its own passes
   * that transaction to `done`: the jobs are removed in it, so their end commits with their work
   * (one commit instead of two) and a rollback keeps them.
   */
  runBatch?(jobs: { payload: P; job: JobRow }[], done: JobBatchDone): Promise<void>;
  /** The most jobs one runBatch call gets (DEFAULT_BATCH_SIZE). */
  batchSize?: number;
}

/** Removes a claimed batch's jobs inside the given transaction (see JobKind.runBatch). */
export type JobBatchDone = (trx: Db) => Promise<void>;

const DEFAULT_BATCH_SIZE = 64;
/**
 * Wake-ups (a job stored, an event committed, a job ended) within this long of the last look for
 * due work are one look: a burst of inbound mail costs one claim per window, not one per mail.
 */
export const JOB_WAKE_WINDOW_MS = 50;

// Compiled once (a job is stored with every inbound mail); `sooner` brings an existing unique job forward.
const insertJob = reusableInsert('jobs', (q) => q.onConflict((oc) => oc.column('unique_key').doNothing()));
const insertJobSooner = reusableInsert('jobs', (q) =>
  q.onConflict((oc) =>
    oc
      .column('unique_key')
      .doUpdateSet({ run_at: (eb) => eb.ref('excluded.run_at') })
      .where('jobs.run_at', '>', (eb) => eb.ref('excluded.run_at')),
  ),
);

/**
 * Stores a job; returns its id. With a uniqueKey that exists already nothing new is stored, and the
 * existing job keeps its time unless `sooner` is set: then it is brought forward to `runAt` (now by
 * default) if it was due later. A job that is running meanwhile (under a lease, perhaps in another
 * process) is not started twice: it runs again at `runAt` once the current run ends.
 */
export async function enqueue(
  db: Db,
  clock: Clock,
  job: { kind: string; payload?: unknown; runAt?: Date; uniqueKey?: string; sooner?: boolean },
): Promise<string> {
  const now = clock.now();
  const id = newId('job', now.getTime());
  await (job.sooner ? insertJobSooner : insertJob)(db, {
    id,
    kind: job.kind,
    unique_key: job.uniqueKey ?? null,
    payload: JSON.stringify(job.payload ?? {}),
    run_at: iso(job.runAt ?? now),
    lease_until: null,
    last_error: null,
    created_at: iso(now),
  });
  return id;
}

interface ClaimedJob extends JobRow {
  leaseMs: number;
  /** The claim's lease end; the job's run_at is set to it as well when claimed. */
  leaseUntil: string;
}

/** What one claim took: one job, or for a kind with runBatch, up to its batchSize (one lease end). */
interface Claim {
  kind: JobKind;
  jobs: ClaimedJob[];
}

const defaultBackoff = (attempt: number) => (attempt >= 8 ? undefined : Math.min(2 ** attempt * 1000, 3_600_000));

/** Work outside the jobs table that tests drain together with the jobs (for example the webhook outbox). */
export interface Drainable {
  /** Does everything due now, waits for work already under way, and says how much it did. */
  drain(): Promise<number>;
}

export class JobRunner {
  private kinds = new Map<string, JobKind>();
  private drainables: Drainable[] = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private running = new Set<Promise<void>>();
  private ticking: Promise<void> | undefined;
  private tickUnderway = false;
  private stopped = true;
  private wakeRequested = false;
  private readonly wakeWindow: WakeWindow;

  constructor(
    private readonly deps: { db: Db; clock: Clock; log: Logger },
    private readonly opts: { pollMs?: number; concurrency?: number; wakeWindowMs?: number } = {},
  ) {
    this.wakeWindow = new WakeWindow(() => this.startTick(), opts.wakeWindowMs ?? JOB_WAKE_WINDOW_MS);
  }

  /**
   * svc_jobs_due and svc_jobs_oldest_due_age_seconds per registered kind: jobs whose time has come
   * and that nobody holds, read from the jobs table at scrape time (the jobs_due index on run_at).
   */
  observe(metrics: Metrics): void {
    const due = async () => {
      const nowText = iso(this.deps.clock.now());
      const rows = await this.deps.db
        .selectFrom('jobs')
        .select((eb) => ['kind', eb.fn.countAll<number>().as('n'), eb.fn.min('run_at').as('oldest')])
        .where('run_at', '<=', nowText)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
        .groupBy('kind')
        .execute();
      const byKind = new Map(rows.map((r) => [r.kind, r]));
      return [...new Set([...this.kinds.keys(), ...byKind.keys()])]
        .sort()
        .map((kind) => ({ kind, n: Number(byKind.get(kind)?.n ?? 0), oldest: byKind.get(kind)?.oldest ?? null }));
    };
    databaseGauge(metrics, {
      name: 'svc_jobs_due',
      help: 'Jobs due now and not held by a worker, by kind.',
      labelNames: ['kind'] as const,
      read: async () => (await due()).map((r) => ({ labels: { kind: r.kind }, value: r.n })),
    });
    databaseGauge(metrics, {
      name: 'svc_jobs_oldest_due_age_seconds',
      help: 'How long the longest-waiting due job of each kind has been due (0 when none is).',
      labelNames: ['kind'] as const,
      read: async () => {
        const now = this.deps.clock.now();
        return (await due()).map((r) => ({ labels: { kind: r.kind }, value: ageSeconds(now, r.oldest) }));
      },
    });
  }

  register(kind: JobKind): void {
    this.kinds.set(kind.kind, kind);
  }

  addDrainable(d: Drainable): void {
    this.drainables.push(d);
  }

  /** Makes sure every periodic kind has its row; the first run is due at once. */
  async schedulePeriodic(): Promise<void> {
    for (const k of this.kinds.values()) {
      if (k.everyMs) await enqueue(this.deps.db, this.deps.clock, { kind: k.kind, uniqueKey: `periodic:${k.kind}` });
    }
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /**
   * Asks the loop to look for due work soon instead of at the next poll: at once after a quiet
   * spell, else within JOB_WAKE_WINDOW_MS (wake-ups meanwhile are one look; see WakeWindow). A
   * wake-up while a look is under way makes another follow it.
   */
  wake(): void {
    if (this.stopped) return;
    this.wakeRequested = true;
    if (!this.tickUnderway) this.wakeWindow.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pollTimer);
    this.wakeWindow.cancel();
    // A tick may be between claiming a job and starting it.
    await this.ticking;
    await Promise.allSettled([...this.running]);
  }

  /** Runs every job that is due by the clock, until none is left. Tests call this after moving the clock. */
  async drain(maxRounds = 1000): Promise<number> {
    let done = 0;
    for (let round = 0; round < maxRounds; round++) {
      // A job the background loop claimed is invisible to claim() here until it ends: wait for it.
      let didSomething = await this.settleBackground();
      for (let i = 0; i < maxRounds; i++) {
        const claim = await this.claim();
        if (!claim) break;
        await this.execute(claim);
        didSomething += claim.jobs.length;
      }
      for (const d of this.drainables) didSomething += await d.drain();
      done += didSomething;
      if (didSomething === 0) break;
    }
    return done;
  }

  /** Waits for the background loop's claim under way and the jobs it runs; says how many jobs there were. */
  private async settleBackground(): Promise<number> {
    await this.ticking;
    const inFlight = [...this.running];
    await Promise.allSettled(inFlight);
    return inFlight.length;
  }

  /** One look for due work at a time; the next look is a wake-up (windowed) or the poll. */
  private startTick(): void {
    if (this.stopped || this.tickUnderway) return;
    clearTimeout(this.pollTimer);
    this.tickUnderway = true;
    this.ticking = this.tick().finally(() => {
      this.tickUnderway = false;
      if (this.stopped) return;
      if (this.wakeRequested) {
        this.wakeWindow.wake();
        return;
      }
      this.pollTimer = setTimeout(() => this.wake(), this.opts.pollMs ?? 1000);
      this.pollTimer.unref();
    });
  }

  private async tick() {
    this.wakeRequested = false;
    const limit = this.opts.concurrency ?? 4;
    try {
      while (!this.stopped && this.running.size < limit) {
        const claim = await this.claim();
        if (!claim) break;
        const p = this.execute(claim).finally(() => {
          this.running.delete(p);
          // Room for the next job: look again (within the wake window).
          this.wake();
        });
        this.running.add(p);
      }
    } catch (error) {
      this.deps.log.error('job queue unavailable', { error });
    }
  }

  private async claim(): Promise<Claim | undefined> {
    const kinds = [...this.kinds.keys()];
    if (kinds.length === 0) return undefined;
    const now = this.deps.clock.now();
    const nowText = iso(now);
    const candidate = await this.deps.db
      .selectFrom('jobs')
      .select(['id', 'kind'])
      .where('run_at', '<=', nowText)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
      .where('kind', 'in', kinds)
      .orderBy('run_at')
      .limit(1)
      .executeTakeFirst();
    if (!candidate) return undefined;
    const kind = this.kinds.get(candidate.kind)!;
    const leaseMs = kind.leaseMs ?? 5 * 60_000;
    const leaseUntil = iso(now.getTime() + leaseMs);
    if (kind.runBatch) {
      // Every due job of the kind that nobody holds, oldest first, up to a batch: one statement.
      const rows = await this.deps.db
        .updateTable('jobs')
        .set({ lease_until: leaseUntil, run_at: leaseUntil, attempts: sql`attempts + 1` })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('jobs as due')
            .select('due.id')
            .where('due.kind', '=', kind.kind)
            .where('due.run_at', '<=', nowText)
            .where((w) => w.or([w('due.lease_until', 'is', null), w('due.lease_until', '<', nowText)]))
            .orderBy('due.run_at')
            .limit(kind.batchSize ?? DEFAULT_BATCH_SIZE),
        )
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
        .returning(['id', 'kind', 'payload', 'attempts'])
        .execute();
      if (rows.length === 0) return this.claim();
      // RETURNING has no order (Postgres): the batch runs in the order its jobs were stored (ids sort by time).
      rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return { kind, jobs: rows.map((r) => ({ ...r, payload: JSON.parse(r.payload), leaseMs, leaseUntil })) };
    }
    // The lease is taken only if nobody took it in between (compare-and-set on the same condition).
    const claimed = await this.deps.db
      .updateTable('jobs')
      // run_at moves to the end of the lease too (when a dead worker's job is due again), so that
      // a `sooner` enqueue during the run shows as a run_at before the lease's end (see finish()).
      .set({ lease_until: leaseUntil, run_at: leaseUntil, attempts: sql`attempts + 1` })
      .where('id', '=', candidate.id)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowText)]))
      .returning(['id', 'kind', 'payload', 'attempts'])
      .executeTakeFirst();
    if (!claimed) return this.claim();
    return { kind, jobs: [{ ...claimed, payload: JSON.parse(claimed.payload), leaseMs, leaseUntil }] };
  }

  private async execute({ kind, jobs }: Claim): Promise<void> {
    if (!kind.runBatch) return this.executeOne(kind, jobs[0]);
    // A batch of one goes through runBatch too, so that its removal can join the batch's transaction.
    let removedBy: Db | undefined;
    try {
      await kind.runBatch(
        jobs.map((job) => ({ payload: job.payload, job })),
        async (trx) => {
          await this.finishBatch(jobs, trx);
          removedBy = trx;
        },
      );
    } catch (error) {
      if (jobs.length === 1) return this.failed(kind, jobs[0], error);
      this.deps.log.warn('job batch failed, running its jobs one by one', { kind: kind.kind, jobs: jobs.length, error });
      for (const job of jobs) await this.executeOne(kind, job);
      return;
    }
    if (!removedBy) await this.finishBatch(jobs, this.deps.db);
  }

  private async executeOne(kind: JobKind, job: ClaimedJob): Promise<void> {
    const { clock } = this.deps;
    try {
      const outcome = await kind.run(job.payload, job);
      if (outcome && 'retryAt' in outcome) {
        await this.finish(job, { runAt: outcome.retryAt });
      } else if (kind.everyMs) {
        await this.finish(job, { runAt: new Date(clock.now().getTime() + kind.everyMs), set: { attempts: 0, last_error: null } });
      } else {
        await this.finish(job, 'done');
      }
    } catch (error) {
      await this.failed(kind, job, error);
    }
  }

  /** A run that threw: retried on the kind's backoff, or given up after its last attempt. */
  private async failed(kind: JobKind, job: ClaimedJob, error: unknown): Promise<void> {
    const { clock, log } = this.deps;
    const delay = kind.everyMs ?? (kind.backoffMs ?? defaultBackoff)(job.attempts);
    const message = error instanceof Error ? error.message : String(error);
    if (delay === undefined) {
      log.error('job failed, giving up', { kind: job.kind, job_id: job.id, attempts: job.attempts, error });
      try {
        await kind.onGiveUp?.(job.payload, error);
      } finally {
        await this.finish(job, 'done');
      }
    } else {
      log.warn('job failed, retrying', { kind: job.kind, job_id: job.id, attempts: job.attempts, error });
      await this.finish(job, { runAt: new Date(clock.now().getTime() + delay), set: { last_error: message.slice(0, 500) } });
    }
  }

  /**
   * Ends a run: the job is removed ('done') or due again at runAt. Only while the lease is still
   * this run's (a worker that outlived its lease leaves the job to the one that took it over). A
   * run_at before the lease's end means a `sooner` enqueue asked for another run meanwhile: that
   * request stands (the earlier of the two times, and a done job is kept for it).
   */
  /** finish(job, 'done') for a claimed batch (one lease end), in one statement unless a job was asked for again meanwhile. */
  private async finishBatch(jobs: ClaimedJob[], db: Db): Promise<void> {
    const ids = jobs.map((j) => j.id);
    const leaseUntil = jobs[0].leaseUntil;
    const removed = await db
      .deleteFrom('jobs')
      .where('id', 'in', ids)
      .where('lease_until', '=', leaseUntil)
      .where('run_at', '=', leaseUntil)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) < ids.length) {
      await db.updateTable('jobs').set({ lease_until: null }).where('id', 'in', ids).where('lease_until', '=', leaseUntil).execute();
    }
  }

  private async finish(job: ClaimedJob, next: 'done' | { runAt: Date; set?: { attempts?: number; last_error?: string | null } }): Promise<void> {
    const { db } = this.deps;
    const mine = db.updateTable('jobs').where('id', '=', job.id).where('lease_until', '=', job.leaseUntil);
    if (next === 'done') {
      const removed = await db
        .deleteFrom('jobs')
        .where('id', '=', job.id)
        .where('lease_until', '=', job.leaseUntil)
        .where('run_at', '=', job.leaseUntil)
        .executeTakeFirst();
      if (Number(removed.numDeletedRows) === 0) await mine.set({ lease_until: null }).execute();
      return;
    }
    const runAt = iso(next.runAt);
    await mine
      .set({
        ...next.set,
        lease_until: null,
        run_at: sql<string>`case when run_at <> ${job.leaseUntil} and run_at < ${runAt} then run_at else ${runAt} end`,
      })
      .execute();
  }
}
