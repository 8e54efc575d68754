// The event buffer: accepted events wait in memory and are written in batches, one transaction per
// flush (at FLUSH_SIZE events or FLUSH_MS after the first waiting one), together with the visits
// they extend and the month's usage. A kill -9 loses what waits (at most FLUSH_MS, about one
// second of traffic): the tracker was answered 202 already and nothing else depends on the rows,
// so a one-second gap in statistical counts is the price of not making one disk write per
// pageview; a normal stop (SIGTERM) flushes first.
//
// What waits (in the buffer and in the write under way) is bounded: past MAX_WAITING_EVENTS, when
// the database writes slower than events arrive, further events are dropped with the reason
// `backlog` (counted like the other drops) rather than kept in memory without end. Conversation
// events (few, one per chat opened or started) are never dropped.
//
// The monthly limit is decided here too, from the usage rows plus what waits, re-read after each
// flush and every few seconds (several processes may share the database).
import { sql } from 'kysely';
import type { Ctx } from '../context.js';
import { sqliteConnectionOf } from '../db/connection.js';
import { isPostgres } from '../db/dialect.js';
import type { AnalyticsEventsTable, AnalyticsVisitsTable, Db } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { iso, MINUTE } from '../platform/clock.js';
import { newId } from '../platform/ids.js';
import { enqueue } from '../platform/jobs.js';
import { insertRows } from './bulk.js';
import { recordIntraday } from './intraday.js';
import { recordDayValues } from './intraday-values.js';
import { monthlyLimit, monthOf } from './properties.js';
import { WriterThread } from './writer-thread.js';

export const FLUSH_SIZE = 500;
export const FLUSH_MS = 1000;
/** Events that may wait in memory (buffered and being written); more are dropped (`backlog`). */
export const MAX_WAITING_EVENTS = 20_000;
export const VISIT_IDLE_MS = 30 * MINUTE;
const QUOTA_REFRESH_MS = 5000;
export const LIMIT_NOTICE_JOB = 'analytics.limit_notice';

/** The event widget.js sends when a visitor first opens the chat on a page. */
export const CHAT_OPENED = 'Chat Opened';
/** Events the widget records for conversations: never dropped for the monthly limit. */
export const CONVERSATION_EVENTS: ReadonlySet<string> = new Set([CHAT_OPENED, 'Conversation Started']);

export type PendingEvent = Omit<AnalyticsEventsTable, 'id' | 'visit_id'>;

interface Quota {
  month: string;
  used: number;
  limit: number;
  loadedAt: number;
}

type C = Pick<Ctx, 'db' | 'clock' | 'config' | 'log'>;

export class EventWriter {
  private pending: PendingEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** The flush run waiting behind the one under way, until it takes its batch. */
  private queued: Promise<void> | undefined;
  private quotas = new Map<string, Quota>();
  /** Events of the write under way. */
  private writing = 0;

  private readonly maxWaiting: number;
  private readonly flushMs: number;
  /** On SQLite, where batches are written (writer-thread.ts). */
  private readonly thread: WriterThread | undefined;

  constructor(
    private readonly ctx: C,
    opts: { maxWaiting?: number; flushMs?: number; threadIdleMs?: number } = {},
  ) {
    this.maxWaiting = opts.maxWaiting ?? MAX_WAITING_EVENTS;
    this.flushMs = opts.flushMs ?? FLUSH_MS;
    const sqlite = sqliteConnectionOf(ctx.db);
    this.thread = sqlite ? new WriterThread(ctx.db, sqlite.name, ctx.config, opts.threadIdleMs) : undefined;
  }

  /** Events buffered or being written. */
  get waiting(): number {
    return this.pending.length + this.writing;
  }

  /** On SQLite, whether the writer thread is up (writer-thread.ts); false on Postgres. */
  get threadRunning(): boolean {
    return this.thread?.running ?? false;
  }

  /** True when no more events may wait: the next ones are dropped with `backlog`. */
  get full(): boolean {
    return this.waiting >= this.maxWaiting;
  }

  /** 'quota' when the workspace is past 110 % of its limit this month (conversation events always pass). */
  async admit(workspaceId: string, name: string): Promise<'ok' | 'quota'> {
    const month = monthOf(this.ctx.clock.now());
    let q = this.quotas.get(workspaceId);
    if (!q || q.month !== month || performance.now() - q.loadedAt > QUOTA_REFRESH_MS) {
      q = await this.loadQuota(workspaceId, month);
      this.quotas.set(workspaceId, q);
    }
    if (q.limit && q.used * 10 >= q.limit * 11 && !CONVERSATION_EVENTS.has(name)) return 'quota';
    q.used++;
    return 'ok';
  }

  private async loadQuota(workspaceId: string, month: string): Promise<Quota> {
    const row = await this.ctx.db
      .selectFrom('analytics_usage')
      .select('events')
      .where('workspace_id', '=', workspaceId)
      .where('month', '=', month)
      .executeTakeFirst();
    const { limit } = await monthlyLimit(this.ctx, workspaceId);
    const waiting = this.pending.filter((e) => e.workspace_id === workspaceId && monthOf(new Date(e.at)) === month).length;
    return { month, used: Number(row?.events ?? 0) + waiting, limit, loadedAt: performance.now() };
  }

  /** Buffers an event; false (nothing kept) when the buffer is full (conversation events are always kept). */
  add(event: PendingEvent): boolean {
    if (this.full && !CONVERSATION_EVENTS.has(event.name)) return false;
    this.pending.push(event);
    if (this.pending.length >= FLUSH_SIZE) void this.flush().catch(() => {});
    else this.timer ??= setTimeout(() => void this.flush().catch(() => {}), this.flushMs).unref();
    return true;
  }

  /** Writes everything waiting (after any flush under way); resolves once committed. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // A run not started yet takes everything pending when it starts, this call's events too. Without
    // this, each event added while a write was under way queued a run of its own behind it: under
    // sustained load on Postgres that chain of waiting promises grew by hundreds a second.
    if (this.queued) return this.queued;
    const run = this.flushing.then(async () => {
      this.queued = undefined;
      const batch = this.pending.splice(0);
      if (!batch.length) return;
      this.writing = batch.length;
      try {
        await (this.thread ? this.thread.write(batch, this.ctx.clock.now()) : writeBatch(this.ctx, batch));
      } catch (error) {
        this.ctx.log.error('analytics events not written', { events: batch.length, error });
        throw error;
      } finally {
        this.writing = 0;
        this.quotas.clear();
      }
    });
    this.queued = run;
    this.flushing = run.catch(() => {});
    return run;
  }

  /** Writes what waits, then ends the writer thread. */
  async close(): Promise<void> {
    await this.flush().catch(() => {});
    await this.thread?.close();
  }
}

type VisitRow = AnalyticsVisitsTable;

const text = 'text' as const;
const EVENT_COLUMNS: Record<keyof AnalyticsEventsTable, 'text'> = {
  id: text,
  property_id: text,
  workspace_id: text,
  at: text,
  day: text,
  name: text,
  visitor_id: text,
  visit_id: text,
  path: text,
  referrer: text,
  source: text,
  utm_source: text,
  utm_medium: text,
  utm_campaign: text,
  utm_content: text,
  utm_term: text,
  country: text,
  region: text,
  city: text,
  browser: text,
  os: text,
  device: text,
  props: text,
};
const VISIT_COLUMNS: Record<keyof VisitRow, 'text' | 'integer'> = {
  id: text,
  property_id: text,
  workspace_id: text,
  visitor_id: text,
  day: text,
  started_at: text,
  last_at: text,
  entry_path: text,
  exit_path: text,
  pageviews: 'integer',
  events: 'integer',
  duration_s: 'integer',
  referrer: text,
  source: text,
  utm_source: text,
  utm_medium: text,
  utm_campaign: text,
  country: text,
  region: text,
  city: text,
  browser: text,
  os: text,
  device: text,
};

/** Writes a batch in one transaction: visits found or started, events, the day's visitors and totals, the month's usage. */
export async function writeBatch(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, batch: PendingEvent[]): Promise<void> {
  batch.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  await inTransaction(ctx.db, async (trx) => {
    const visits = await openVisits(trx, batch);
    // Each open visit as it was before the batch: the kept sums move by the difference (intraday-values.ts).
    const before = new Map([...visits.values()].map((v) => [v.id, { ...v }]));
    const created = new Map<string, VisitRow>();
    const changed = new Map<string, VisitRow>();
    const events: AnalyticsEventsTable[] = [];
    for (const e of batch) {
      let visitId: string | null = null;
      if (e.visitor_id) {
        const key = `${e.property_id}\0${e.visitor_id}`;
        const v = visits.get(key);
        const atMs = Date.parse(e.at);
        const pageview = e.name === 'pageview';
        if (v && atMs - Date.parse(v.last_at) <= VISIT_IDLE_MS) {
          v.last_at = e.at;
          v.duration_s = Math.round((atMs - Date.parse(v.started_at)) / 1000);
          if (pageview) {
            v.exit_path = e.path;
            v.pageviews++;
          }
          v.events++;
          if (!created.has(v.id)) changed.set(v.id, v);
          visitId = v.id;
        } else {
          const nv: VisitRow = {
            id: newId('avi', atMs),
            property_id: e.property_id,
            workspace_id: e.workspace_id,
            visitor_id: e.visitor_id,
            day: e.day,
            started_at: e.at,
            last_at: e.at,
            entry_path: e.path,
            exit_path: e.path,
            pageviews: pageview ? 1 : 0,
            events: 1,
            duration_s: 0,
            referrer: e.referrer,
            source: e.source,
            utm_source: e.utm_source,
            utm_medium: e.utm_medium,
            utm_campaign: e.utm_campaign,
            country: e.country,
            region: e.region,
            city: e.city,
            browser: e.browser,
            os: e.os,
            device: e.device,
          };
          visits.set(key, nv);
          created.set(nv.id, nv);
          visitId = nv.id;
        }
      }
      events.push({ ...e, id: newId('aev', Date.parse(e.at)), visit_id: visitId });
    }
    await insertRows(trx, 'analytics_visits', [...created.values()], VISIT_COLUMNS);
    for (const rows of chunks([...changed.values()], 1000)) await updateVisits(trx, rows);
    await insertRows(trx, 'analytics_events', events, EVENT_COLUMNS);
    const started = [...created.values()];
    const moved = [...changed.values()].map((after) => ({ before: before.get(after.id)!, after }));
    await recordIntraday(trx, batch, started, moved);
    await recordDayValues(trx, batch, started, moved);
    await countUsage(ctx, trx, batch);
  });
}

/** Moves on visits that went on in the batch: one statement for many (a round trip each cost most of a batch on Postgres). */
async function updateVisits(trx: Db, rows: VisitRow[]): Promise<void> {
  if (isPostgres(trx)) {
    const col = <K extends keyof VisitRow>(k: K) => rows.map((v) => v[k]);
    await sql`update analytics_visits set last_at = v.last_at, exit_path = v.exit_path, pageviews = v.pageviews, events = v.events, duration_s = v.duration_s
      from unnest(${col('id')}::text[], ${col('last_at')}::text[], ${col('exit_path')}::text[], ${col('pageviews')}::integer[], ${col('events')}::integer[],
        ${col('duration_s')}::integer[]) as v(id, last_at, exit_path, pageviews, events, duration_s)
      where analytics_visits.id = v.id`.execute(trx);
    return;
  }
  const values = sql.join(rows.map((v) => sql`(${v.id}, ${v.last_at}, ${v.exit_path}, ${v.pageviews}, ${v.events}, ${v.duration_s})`));
  await sql`with v(id, last_at, exit_path, pageviews, events, duration_s) as (values ${values})
    update analytics_visits set last_at = v.last_at, exit_path = v.exit_path, pageviews = cast(v.pageviews as integer),
      events = cast(v.events as integer), duration_s = cast(v.duration_s as integer)
    from v where analytics_visits.id = v.id`.execute(trx);
}

/**
 * The latest visit of each visitor in the batch that may still go on (last event within 30 minutes).
 * On Postgres they are locked (in id order, one statement: a batch has at most FLUSH_SIZE visitors)
 * so that writers in several processes move a visit on one after the other instead of overwriting
 * each other's changes, which the kept figures (intraday-values.ts) add up; SQLite writes one
 * transaction at a time.
 */
async function openVisits(db: Db, batch: PendingEvent[]): Promise<Map<string, VisitRow>> {
  const out = new Map<string, VisitRow>();
  const withVisitor = batch.filter((e) => e.visitor_id);
  if (!withVisitor.length) return out;
  const since = iso(Date.parse(withVisitor[0].at) - VISIT_IDLE_MS);
  const visitors = [...new Set(withVisitor.map((e) => e.visitor_id!))];
  for (const ids of chunks(visitors, FLUSH_SIZE)) {
    let q = db.selectFrom('analytics_visits').selectAll().where('visitor_id', 'in', ids).where('last_at', '>=', since).orderBy('id');
    if (isPostgres(db)) q = q.forUpdate();
    for (const r of await q.execute()) {
      const key = `${r.property_id}\0${r.visitor_id}`;
      const seen = out.get(key);
      if (!seen || seen.last_at <= r.last_at)
        out.set(key, { ...r, pageviews: Number(r.pageviews), events: Number(r.events), duration_s: Number(r.duration_s) });
    }
  }
  return out;
}

/** Adds the batch to each workspace's month; crossing 80 % or 100 % of the limit stores a notice job (once). */
async function countUsage(ctx: Pick<Ctx, 'clock' | 'config'>, trx: Db, batch: PendingEvent[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const e of batch) {
    const key = `${e.workspace_id}\0${monthOf(new Date(e.at))}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const now = iso(ctx.clock.now());
  for (const [key, n] of counts) {
    const [workspaceId, month] = key.split('\0');
    const row = await trx
      .insertInto('analytics_usage')
      .values({ workspace_id: workspaceId, month, events: n, warned_80_at: null, warned_100_at: null })
      .onConflict((oc) => oc.columns(['workspace_id', 'month']).doUpdateSet((eb) => ({ events: eb('analytics_usage.events', '+', n) })))
      .returning(['events', 'warned_80_at', 'warned_100_at'])
      .executeTakeFirstOrThrow();
    const { limit } = await monthlyLimit({ db: trx, config: ctx.config }, workspaceId);
    if (!limit) continue;
    const events = Number(row.events);
    for (const level of [100, 80] as const) {
      const column = level === 100 ? 'warned_100_at' : 'warned_80_at';
      if (events * 100 < limit * level || row[column]) continue;
      await trx
        .updateTable('analytics_usage')
        .set(level === 100 ? { warned_100_at: now, warned_80_at: row.warned_80_at ?? now } : { warned_80_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('month', '=', month)
        .execute();
      await enqueue(trx, ctx.clock, {
        kind: LIMIT_NOTICE_JOB,
        payload: { workspaceId, month, level, events, limit },
        uniqueKey: `${LIMIT_NOTICE_JOB}:${workspaceId}:${month}:${level}`,
      });
      break; // past 100 % the 80 % notice is not sent as well
    }
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
