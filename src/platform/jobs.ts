// Durable background work. Anything that must happen later is a `jobs` row first and work second;
// a worker claims a row with a lease, so after a crash the lease runs out and the job runs again.
import { sql } from 'kysely';
import type { Db } from '../db/schema.js';
import type { Clock } from './clock.js';
import { iso } from './clock.js';
import { newId } from './ids.js';
import type { Logger } from './log.js';
import { ageSeconds, databaseGauge, type Metrics } from './metrics.js';

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
}

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
  await db
    .insertInto('jobs')
    .values({
      id,
      kind: job.kind,
      unique_key: job.uniqueKey ?? null,
      payload: JSON.stringify(job.payload ?? {}),
      run_at: iso(job.runAt ?? now),
      lease_until: null,
      last_error: null,
      created_at: iso(now),
    })
    .onConflict((oc) =>
      job.sooner
        ? oc
            .column('unique_key')
            .doUpdateSet({ run_at: (eb) => eb.ref('excluded.run_at') })
            .where('jobs.run_at', '>', (eb) => eb.ref('excluded.run_at'))
        : oc.column('unique_key').doNothing(),
    )
    .execute();
  return id;
}

interface ClaimedJob extends JobRow {
  leaseMs: number;
  /** The claim's lease end; the job's run_at is set to it as well when claimed. */
  leaseUntil: string;
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
  private timer: NodeJS.Timeout | undefined;
  private running = new Set<Promise<void>>();
  private ticking: Promise<void> | undefined;
  private stopped = true;
  private wakeRequested = false;

  constructor(
    private readonly deps: { db: Db; clock: Clock; log: Logger },
    private readonly opts: { pollMs?: number; concurrency?: number } = {},
  ) {}

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
    this.schedule(0);
  }

  /** Asks the loop to look for due work now instead of at the next poll. */
  wake(): void {
    if (this.stopped) return;
    this.wakeRequested = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
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
        const job = await this.claim();
        if (!job) break;
        await this.execute(job);
        didSomething++;
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

  private schedule(ms: number) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.ticking = this.tick();
    }, ms);
    this.timer.unref();
  }

  private async tick() {
    this.wakeRequested = false;
    const limit = this.opts.concurrency ?? 4;
    try {
      while (!this.stopped && this.running.size < limit) {
        const job = await this.claim();
        if (!job) break;
        const p = this.execute(job).finally(() => {
          this.running.delete(p);
          if (!this.stopped) this.schedule(0);
        });
        this.running.add(p);
      }
    } catch (error) {
      this.deps.log.error('job queue unavailable', { error });
    }
    this.schedule(this.wakeRequested ? 0 : (this.opts.pollMs ?? 1000));
  }

  private async claim(): Promise<ClaimedJob | undefined> {
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
    const leaseMs = this.kinds.get(candidate.kind)?.leaseMs ?? 5 * 60_000;
    const leaseUntil = iso(now.getTime() + leaseMs);
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
    return { ...claimed, payload: JSON.parse(claimed.payload), leaseMs, leaseUntil };
  }

  private async execute(job: ClaimedJob): Promise<void> {
    const kind = this.kinds.get(job.kind)!;
    const { clock, log } = this.deps;
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
  }

  /**
   * Ends a run: the job is removed ('done') or due again at runAt. Only while the lease is still
   * this run's (a worker that outlived its lease leaves the job to the one that took it over). A
   * run_at before the lease's end means a `sooner` enqueue asked for another run meanwhile: that
   * request stands (the earlier of the two times, and a done job is kept for it).
   */
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
