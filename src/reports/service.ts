// Reports (per UTC day: conversations opened and closed, replies, first response and resolution
// times, ratings) read from the totals that src/reports/statistics.ts keeps in the transaction of
// each change, and usage (per month: billed vs imported conversations and messages, storage).
import { sql } from 'kysely';
import type { Access } from '../auth/access.js';
import { requireInbox } from '../auth/access.js';
import type { Ctx } from '../context.js';
import { usageByMonth } from '../conversations/usage.js';
import { isPostgres } from '../db/dialect.js';
import { readRows } from '../db/readers.js';
import { DAY } from '../platform/clock.js';
import { invalid } from '../platform/errors.js';
import { slaOutcomesIn } from '../sla/store.js';
import { findWorkspace } from '../workspaces/store.js';
import { deleteWorkspaceDayFigures, keepDays, readKeptDays, scopeKey } from './day-figures.js';
import { type DurationFigures, periodDurations } from './durations.js';

export const REPORT_MAX_DAYS = 366;
export const REPORT_DEFAULT_DAYS = 30;
export const USAGE_MAX_MONTHS = 36;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const MONTH_RE = /^\d{4}-\d{2}$/;

function parseDay(text: string, name: string): Date {
  const d = new Date(`${text}T00:00:00.000Z`);
  if (!DAY_RE.test(text) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text) throw invalid(`${name} must be a date (YYYY-MM-DD)`);
  return d;
}

const dayText = (d: Date) => d.toISOString().slice(0, 10);

/** The days from..to inclusive (default: the last 30 days up to today, UTC). */
export function reportPeriod(now: Date, input: { from?: string; to?: string }): string[] {
  const to = input.to ? parseDay(input.to, 'to') : new Date(`${dayText(now)}T00:00:00.000Z`);
  const from = input.from ? parseDay(input.from, 'from') : new Date(to.getTime() - (REPORT_DEFAULT_DAYS - 1) * DAY);
  if (from > to) throw invalid('from must not be after to');
  const count = Math.round((to.getTime() - from.getTime()) / DAY) + 1;
  if (count > REPORT_MAX_DAYS) throw invalid(`a report covers at most ${REPORT_MAX_DAYS} days`);
  return Array.from({ length: count }, (_, i) => dayText(new Date(from.getTime() + i * DAY)));
}

/**
 * Median (the mean of the two middle values for an even count, rounded) and p90 (nearest rank) of
 * sorted values: the definition periodDurations (durations.ts) computes in the database.
 */
export function durationFigures(sorted: ArrayLike<number>) {
  const n = sorted.length;
  if (n === 0) return { count: 0, median_seconds: null, p90_seconds: null };
  const median = n % 2 === 1 ? sorted[(n - 1) / 2] : Math.round((sorted[n / 2 - 1] + sorted[n / 2]) / 2);
  return { count: n, median_seconds: median, p90_seconds: sorted[Math.ceil(0.9 * n) - 1] };
}

type Totals = { opened: number; closed: number; replies: number; ratings: number; rating_sum: number; dist: number[] };
/** What is kept of a past day (./day-figures.ts). */
type KeptDay = { totals: Totals; durations: DurationFigures };
const emptyTotals = (): Totals => ({ opened: 0, closed: 0, replies: 0, ratings: 0, rating_sum: 0, dist: [0, 0, 0, 0, 0] });

function figures(t: Totals, durations: DurationFigures, withOpened: boolean) {
  return {
    opened: withOpened ? t.opened : null,
    closed: t.closed,
    replies: t.replies,
    first_response: durations.first_response,
    resolution: durations.resolution,
    first_response_business: durations.first_response_business,
    resolution_business: durations.resolution_business,
    ratings: {
      count: t.ratings,
      average: t.ratings ? Math.round((t.rating_sum / t.ratings) * 100) / 100 : null,
      distribution: { '1': t.dist[0], '2': t.dist[1], '3': t.dist[2], '4': t.dist[3], '5': t.dist[4] },
    },
  };
}

/** SLA over the period: per target how many were met in time and breached, and breaches by inbox and member. */
function slaFigures(rows: Awaited<ReturnType<typeof slaOutcomesIn>>) {
  const targets = { first_response: { met: 0, breached: 0 }, next_response: { met: 0, breached: 0 }, resolution: { met: 0, breached: 0 } };
  const byInbox = new Map<string, number>();
  const byMember = new Map<string, number>();
  for (const r of rows) {
    targets[r.target][r.outcome]++;
    if (r.outcome !== 'breached') continue;
    byInbox.set(r.inbox_id, (byInbox.get(r.inbox_id) ?? 0) + 1);
    byMember.set(r.member_id, (byMember.get(r.member_id) ?? 0) + 1);
  }
  const percent = (t: { met: number; breached: number }) => (t.met + t.breached ? Math.round((t.met / (t.met + t.breached)) * 1000) / 10 : null);
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return {
    first_response: { ...targets.first_response, met_percent: percent(targets.first_response) },
    next_response: { ...targets.next_response, met_percent: percent(targets.next_response) },
    resolution: { ...targets.resolution, met_percent: percent(targets.resolution) },
    breaches_by_inbox: sorted(byInbox).map(([inbox_id, breaches]) => ({ inbox_id, breaches })),
    breaches_by_member: sorted(byMember).map(([member_id, breaches]) => ({ member_id: member_id || null, breaches })),
  };
}

export interface ReportInput {
  from?: string;
  to?: string;
  inboxId?: string;
  memberId?: string;
}

/**
 * The report of a period for the caller's inboxes (or one inbox), optionally one member: what they
 * replied and closed, their first responses and resolutions, and ratings of conversations assigned
 * to them. Conversations opened belong to no member, so with member_id `opened` is null.
 */
export async function getReport(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, input: ReportInput) {
  const days = reportPeriod(ctx.clock.now(), input);
  const from = days[0];
  const to = days[days.length - 1];
  if (input.inboxId) requireInbox(access, input.inboxId);
  const inboxIds = input.inboxId ? [input.inboxId] : access.inboxIds;
  // dayIndexed false: the day range is checked without the day index (SQLite leaves an index alone
  // for `+day`), so that a query ordered by value walks 0065's (workspace, kind, value) index.
  const postgres = isPostgres(ctx.db);
  const scope = <Q extends { where: (...args: any[]) => Q }>(q: Q, dayIndexed = true): Q => {
    const day = dayIndexed || postgres ? 'day' : sql`+day`;
    let out = q.where('workspace_id', '=', access.workspaceId).where(day, '>=', from).where(day, '<=', to);
    if (inboxIds !== null) out = inboxIds.length ? out.where('inbox_id', 'in', inboxIds) : out.where('inbox_id', '=', '');
    if (input.memberId) out = out.where('member_id', '=', input.memberId);
    return out;
  };

  // Past days' totals and figures are kept once computed (./day-figures.ts); the rest is computed.
  const kept = {
    db: ctx.db,
    workspaceId: access.workspaceId,
    scope: scopeKey(inboxIds, input.memberId),
    before: dayText(new Date(ctx.clock.now().getTime() - DAY)),
  };
  const keptDays = await readKeptDays<KeptDay>(kept, days);
  const missing = days.filter((day) => !keptDays.has(day));
  const perDay = new Map<string, Totals>();
  for (const day of days) perDay.set(day, keptDays.get(day)?.totals ?? emptyTotals());
  if (missing.length) {
    const sum = (column: string) => sql<number>`sum(${sql.ref(column)})`.as(column);
    const totalsRows = await readRows(
      ctx.db,
      scope(ctx.db.selectFrom('report_days'))
        .where('day', '>=', missing[0])
        .where('day', '<=', missing[missing.length - 1])
        .select(['day', sum('opened'), sum('closed'), sum('replies'), sum('ratings'), sum('rating_sum'), ...[1, 2, 3, 4, 5].map((i) => sum(`rating_${i}`))])
        .groupBy('day'),
    );
    for (const r of totalsRows) {
      const t = perDay.get(r.day);
      if (!t || keptDays.has(r.day)) continue;
      const row = r as unknown as Record<string, number | string | null>;
      t.opened += Number(row.opened ?? 0);
      t.closed += Number(row.closed ?? 0);
      t.replies += Number(row.replies ?? 0);
      t.ratings += Number(row.ratings ?? 0);
      t.rating_sum += Number(row.rating_sum ?? 0);
      for (let i = 0; i < 5; i++) t.dist[i] += Number(row[`rating_${i + 1}`] ?? 0);
    }
  }
  const durations = await periodDurations(
    ctx.db,
    (dayIndexed) => scope(ctx.db.selectFrom('report_durations'), dayIndexed),
    postgres,
    days,
    new Map([...keptDays].map(([day, k]) => [day, k.durations])),
  );
  await keepDays<KeptDay>(kept, new Map(missing.map((day) => [day, { totals: perDay.get(day)!, durations: durations.perDay.get(day)! }])));
  const all = emptyTotals();
  for (const t of perDay.values()) {
    all.opened += t.opened;
    all.closed += t.closed;
    all.replies += t.replies;
    all.ratings += t.ratings;
    all.rating_sum += t.rating_sum;
    for (let i = 0; i < 5; i++) all.dist[i] += t.dist[i];
  }
  const sla = slaFigures(await slaOutcomesIn(ctx.db, { workspaceId: access.workspaceId, from, to, inboxIds, memberId: input.memberId }));
  const withOpened = !input.memberId;
  return {
    from,
    to,
    inbox_id: input.inboxId ?? null,
    member_id: input.memberId ?? null,
    totals: figures(all, durations.period, withOpened),
    sla,
    days: days.map((day) => ({ day, ...figures(perDay.get(day)!, durations.perDay.get(day)!, withOpened) })),
  };
}

function parseMonth(text: string, name: string): { year: number; month: number } {
  if (!MONTH_RE.test(text)) throw invalid(`${name} must be a month (YYYY-MM)`);
  const [year, month] = text.split('-').map(Number);
  if (month < 1 || month > 12) throw invalid(`${name} must be a month (YYYY-MM)`);
  return { year, month };
}

const monthText = (y: number, m: number) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}`;

/**
 * Usage per month from..to (default: the last 12 months up to this one, UTC, and none from before
 * the workspace existed).
 */
export async function getUsage(ctx: Pick<Ctx, 'db' | 'clock'>, access: Access, input: { from?: string; to?: string }) {
  const now = ctx.clock.now();
  const to = input.to ? parseMonth(input.to, 'to') : { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
  let from = input.from ? parseMonth(input.from, 'from') : { year: to.month === 12 ? to.year : to.year - 1, month: (to.month % 12) + 1 };
  const created = input.from ? undefined : (await findWorkspace(ctx.db, access.workspaceId))?.created_at;
  if (created) {
    const start = { year: Number(created.slice(0, 4)), month: Number(created.slice(5, 7)) };
    if (start.year * 12 + start.month > from.year * 12 + from.month && start.year * 12 + start.month <= to.year * 12 + to.month) from = start;
  }
  const count = (to.year - from.year) * 12 + (to.month - from.month) + 1;
  if (count < 1) throw invalid('from must not be after to');
  if (count > USAGE_MAX_MONTHS) throw invalid(`usage covers at most ${USAGE_MAX_MONTHS} months`);
  const months = Array.from({ length: count }, (_, i) => {
    const index = from.year * 12 + (from.month - 1) + i;
    return monthText(Math.floor(index / 12), (index % 12) + 1);
  });
  const next = to.month === 12 ? monthText(to.year + 1, 1) : monthText(to.year, to.month + 1);
  const usage = await usageByMonth(ctx.db, access.workspaceId, { fromMonth: months[0], beforeMonth: next });
  return {
    from: months[0],
    to: months[months.length - 1],
    storage_bytes: usage.storageBytes,
    months: months.map((month) => {
      const m = usage.months.get(month);
      return {
        month,
        conversations: { billed: m?.conversationsBilled ?? 0, imported: m?.conversationsImported ?? 0 },
        messages: { billed: m?.messagesBilled ?? 0, imported: m?.messagesImported ?? 0 },
        storage_bytes_added: m?.bytesAdded ?? 0,
      };
    }),
  };
}

/** Workspace deletion step: report totals and durations, then the kept day figures. */
export async function deleteWorkspaceReportTotals(ctx: Pick<Ctx, 'db'>, workspaceId: string, batch: number): Promise<number> {
  const days = await ctx.db.selectFrom('report_days').select('day').where('workspace_id', '=', workspaceId).orderBy('day').limit(1).executeTakeFirst();
  const durations = await ctx.db
    .selectFrom('report_durations')
    .select('day')
    .where('workspace_id', '=', workspaceId)
    .orderBy('day')
    .limit(1)
    .executeTakeFirst();
  const day = [days?.day, durations?.day].filter((d): d is string => !!d).sort()[0];
  if (!day) return deleteWorkspaceDayFigures(ctx.db, workspaceId, batch);
  // One day at a time keeps batches small without row ids.
  const a = await ctx.db.deleteFrom('report_days').where('workspace_id', '=', workspaceId).where('day', '=', day).executeTakeFirst();
  const b = await ctx.db.deleteFrom('report_durations').where('workspace_id', '=', workspaceId).where('day', '=', day).executeTakeFirst();
  void batch;
  return Math.max(1, Number(a.numDeletedRows) + Number(b.numDeletedRows));
}
