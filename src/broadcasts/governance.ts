// Broadcast governance per workspace: the operator's approval, denial and suspension, the daily
// recipient limit, the warm-up, and the automatic suspension on 30-day complaint and bounce rates.
//
// Status values (shown by `svc workspace broadcasts show` and GET /v1/workspace/broadcasts):
//   allowed             may send without approval (made by bootstrap, or SVC_BROADCASTS=on)
//   approval_required   made by sign-up under SVC_BROADCASTS=approval; no request sent yet
//   approval_requested  an owner sent an approval request; waiting for the operator
//   approved            the operator approved (this also lifts a suspension)
//   denied              the operator said no; an owner may ask again
//   suspended           by the operator or automatically; only the operator lifts it
// Refusals when scheduling or resuming: 409 `broadcasts_not_approved` (approval_required,
// approval_requested, denied) and 409 `broadcasts_suspended` (suspended).
//
// Daily limit: recipients per UTC day across the workspace's broadcasts, the smallest of the
// workspace limit, SVC_BROADCAST_DAILY_RECIPIENTS and the warm-up. Warm-up: 500 on the first day,
// doubled after each clean day. A clean day is a UTC day on which the workspace sent broadcast
// mail to at least half of that day's warm-up allowance, with permanent bounces under 5 % and
// spam complaints under 0.1 % of that day's mails (as known when the next sending day begins),
// and no broadcast pausing itself for its bounce or complaint rate. Any other sending day is dirty:
// the allowance stays where it was (it does not double). Days without sending change nothing.
import { sql, type Updateable } from 'kysely';
import type { Ctx } from '../context.js';
import type { BroadcastGovernanceTable, Db, WorkspacesTable } from '../db/schema.js';
import { workspaceApproved } from '../mailer-tenants/service.js';
import { addDigestLine } from '../operator-digest/service.js';
import { DAY, iso } from '../platform/clock.js';
import { conflict, invalid } from '../platform/errors.js';
import { charCount } from '../platform/text.js';
import { findWorkspace } from '../workspaces/store.js';
import { pauseBroadcasts } from './store.js';

export type GovernanceRow = BroadcastGovernanceTable;
export type ShownStatus = 'allowed' | 'approval_required' | 'approval_requested' | 'approved' | 'denied' | 'suspended';

export const WARMUP_START = 500;
export const WARMUP_CAP = 2 ** 30;
export const REASON_MAX = 500;
/** Automatic suspension: ≥ 0.3 % complaints among ≥ 1,000 mails, or ≥ 8 % bounces among ≥ 2,000 (30 days). */
export const SUSPEND_COMPLAINTS = { minMails: 1000, perThousand: 3 } as const;
export const SUSPEND_BOUNCES = { minMails: 2000, percent: 8 } as const;
/** A clean day: bounces under 5 %, complaints under 0.1 %. */
export const CLEAN_DAY = { bouncePercent: 5, complaintPerThousand: 1 } as const;
export const RATE_WINDOW_DAYS = 30;

type Tx = Pick<Ctx, 'db' | 'clock'>;

export function utcDay(d: Date | number): string {
  return iso(d).slice(0, 10);
}

export function startOfNextUtcDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));
}

export function daysBefore(day: string, n: number): string {
  return utcDay(new Date(`${day}T00:00:00.000Z`).getTime() - n * DAY);
}

export async function governanceRow(db: Db, workspaceId: string): Promise<GovernanceRow | undefined> {
  return db.selectFrom('broadcast_governance').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** The workspace's row, created with the defaults when it has none. */
export async function ensureGovernance(tx: Tx, workspaceId: string): Promise<GovernanceRow> {
  const now = iso(tx.clock.now());
  await tx.db
    .insertInto('broadcast_governance')
    .values({
      workspace_id: workspaceId,
      status: null,
      reason: null,
      suspended_by: null,
      suspended_at: null,
      decided_at: null,
      daily_limit: null,
      warmup_allowance: WARMUP_START,
      warmup_through_day: null,
      request_email: null,
      request_website: null,
      request_senders: null,
      request_consent: null,
      requested_at: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('workspace_id').doNothing())
    .execute();
  return (await governanceRow(tx.db, workspaceId))!;
}

export function approvalNeeded(config: Ctx['config'], workspace: Pick<WorkspacesTable, 'origin'>): boolean {
  return config.broadcasts.mode === 'approval' && workspace.origin === 'signup';
}

export function shownStatus(config: Ctx['config'], workspace: Pick<WorkspacesTable, 'origin'>, row: Pick<GovernanceRow, 'status'> | undefined): ShownStatus {
  switch (row?.status ?? null) {
    case 'suspended':
      return 'suspended';
    case 'approved':
      return 'approved';
    case 'denied':
      return 'denied';
    case 'requested':
      return 'approval_requested';
    default:
      return approvalNeeded(config, workspace) ? 'approval_required' : 'allowed';
  }
}

/** Scheduling and resuming: refused while suspended or not approved. */
export async function assertMaySend(ctx: Pick<Ctx, 'db' | 'config'>, workspace: Pick<WorkspacesTable, 'id' | 'origin'>): Promise<void> {
  const status = shownStatus(ctx.config, workspace, await governanceRow(ctx.db, workspace.id));
  if (status === 'suspended') throw conflict('broadcasts of this workspace are suspended by the server operator', 'broadcasts_suspended');
  if (status === 'approval_required') {
    throw conflict('broadcasts of this workspace need the server operator’s approval; an owner can send an approval request', 'broadcasts_not_approved');
  }
  if (status === 'approval_requested') throw conflict('the approval request is waiting for the server operator', 'broadcasts_not_approved');
  if (status === 'denied') throw conflict('the server operator denied broadcasts for this workspace; an owner may ask again', 'broadcasts_not_approved');
}

function checkReason(reason: string | undefined): string | null {
  if (reason === undefined) return null;
  const r = reason.trim();
  if (charCount(r) > REASON_MAX) throw invalid(`the reason must be at most ${REASON_MAX} characters`);
  return r || null;
}

type Workspace = Pick<WorkspacesTable, 'id' | 'name' | 'origin'>;

/** Records an operator's (or the automatic) decision on the workspace's governance row; returns the row. */
async function decide(trx: Db, now: string, workspaceId: string, decision: Updateable<BroadcastGovernanceTable>): Promise<GovernanceRow> {
  await trx
    .updateTable('broadcast_governance')
    .set({ ...decision, decided_at: now, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .execute();
  return (await governanceRow(trx, workspaceId))!;
}

export async function approveBroadcasts(ctx: Ctx, workspace: Workspace, reason?: string): Promise<GovernanceRow> {
  const text = checkReason(reason);
  const row = await ctx.db.transaction().execute(async (trx) => {
    await ensureGovernance({ db: trx, clock: ctx.clock }, workspace.id);
    return decide(trx, iso(ctx.clock.now()), workspace.id, { status: 'approved', reason: text, suspended_by: null, suspended_at: null });
  });
  ctx.log.info('broadcasts approved', { workspace_id: workspace.id });
  // The inboxes' mail-provider tenants are created (or brought up to date) by the server's job.
  await workspaceApproved(ctx, workspace.id);
  return row;
}

export async function denyBroadcasts(ctx: Ctx, workspace: Workspace, reason?: string): Promise<GovernanceRow> {
  const text = checkReason(reason);
  return ctx.db.transaction().execute(async (trx) => {
    const current = await ensureGovernance({ db: trx, clock: ctx.clock }, workspace.id);
    if (current.status === 'suspended')
      throw conflict('the workspace is suspended; approve to lift the suspension first, or leave it suspended', 'broadcasts_suspended');
    const row = await decide(trx, iso(ctx.clock.now()), workspace.id, { status: 'denied', reason: text });
    ctx.log.info('broadcasts denied', { workspace_id: workspace.id });
    return row;
  });
}

/** Suspends (operator or automatic) and pauses the workspace's scheduled and sending broadcasts. */
export async function suspendBroadcasts(
  ctx: Pick<Ctx, 'db' | 'clock' | 'log' | 'metrics'>,
  workspace: Pick<WorkspacesTable, 'id'>,
  reason: string | undefined,
  by: 'operator' | 'automatic',
): Promise<{ row: GovernanceRow; paused: string[] }> {
  const text = by === 'operator' ? checkReason(reason) : (reason ?? null);
  const result = await ctx.db.transaction().execute(async (trx) => {
    await ensureGovernance({ db: trx, clock: ctx.clock }, workspace.id);
    const now = iso(ctx.clock.now());
    await decide(trx, now, workspace.id, { status: 'suspended', reason: text, suspended_by: by, suspended_at: now });
    const paused = await pauseBroadcasts(
      { db: trx, clock: ctx.clock, metrics: ctx.metrics },
      { workspaceId: workspace.id },
      'workspace_suspended',
      by === 'automatic' ? text : 'suspended by the server operator',
    );
    return { row: (await governanceRow(trx, workspace.id))!, paused };
  });
  ctx.log.warn('broadcasts suspended', { workspace_id: workspace.id, by, broadcasts_paused: result.paused.length });
  return result;
}

/** The operator's limit of recipients per UTC day; 0 removes it (the server limit and warm-up still apply). */
export async function setDailyLimit(ctx: Pick<Ctx, 'db' | 'clock'>, workspace: Pick<WorkspacesTable, 'id'>, daily: number): Promise<GovernanceRow> {
  if (!Number.isInteger(daily) || daily < 0 || daily > 1_000_000_000) throw invalid('the daily limit must be a whole number from 0 to 1000000000');
  return ctx.db.transaction().execute(async (trx) => {
    await ensureGovernance({ db: trx, clock: ctx.clock }, workspace.id);
    await trx
      .updateTable('broadcast_governance')
      .set({ daily_limit: daily === 0 ? null : daily, updated_at: iso(ctx.clock.now()) })
      .where('workspace_id', '=', workspace.id)
      .execute();
    return (await governanceRow(trx, workspace.id))!;
  });
}

export const REQUEST_FIELD_MAX = 2000;

export interface ApprovalRequest {
  website: string;
  senders: string;
  consent: string;
}

/** An owner asks the operator for approval (first time or after a denial). */
export async function requestApproval(ctx: Ctx, workspace: Workspace, personEmail: string, input: ApprovalRequest): Promise<GovernanceRow> {
  const website = input.website.trim();
  const senders = input.senders.trim();
  const consent = input.consent.trim();
  if (!website || charCount(website) > 500) throw invalid('website must be 1 to 500 characters');
  if (!senders || charCount(senders) > REQUEST_FIELD_MAX) throw invalid(`senders (who sends and what) must be 1 to ${REQUEST_FIELD_MAX} characters`);
  if (!consent || charCount(consent) > REQUEST_FIELD_MAX) throw invalid(`consent (how subscribers agreed) must be 1 to ${REQUEST_FIELD_MAX} characters`);
  const row = await ctx.db.transaction().execute(async (trx) => {
    const current = await ensureGovernance({ db: trx, clock: ctx.clock }, workspace.id);
    const status = shownStatus(ctx.config, workspace, current);
    if (status === 'suspended')
      throw conflict('broadcasts of this workspace are suspended; only the server operator lifts a suspension', 'broadcasts_suspended');
    if (status === 'allowed' || status === 'approved') throw conflict('this workspace may already send broadcasts', 'approval_not_needed');
    const now = iso(ctx.clock.now());
    await trx
      .updateTable('broadcast_governance')
      .set({
        status: 'requested',
        request_email: personEmail,
        request_website: website,
        request_senders: senders,
        request_consent: consent,
        requested_at: now,
        updated_at: now,
      })
      .where('workspace_id', '=', workspace.id)
      .execute();
    await addDigestLine(
      { ...ctx, db: trx },
      {
        kind: 'approval_requested',
        workspaceId: workspace.id,
        text: `workspace ${JSON.stringify(workspace.name)} (${workspace.id}): ${personEmail} asks to send broadcasts. Website: ${website}. Who sends and what: ${senders}. How subscribers agreed: ${consent}.`,
      },
    );
    return (await governanceRow(trx, workspace.id))!;
  });
  ctx.log.info('broadcast approval requested', { workspace_id: workspace.id });
  return row;
}

// ---- daily limit and warm-up ----

export interface Allowance {
  day: string;
  /** The smallest of the three (null parts do not apply). */
  limit: number;
  reserved: number;
  remaining: number;
  parts: { workspace: number | null; server: number | null; warmup: number };
}

/** Folds the sending days before `today` into the warm-up allowance (and stores the result). */
async function currentWarmup(tx: Tx, gov: GovernanceRow, today: string): Promise<number> {
  let q = tx.db.selectFrom('broadcast_daily_totals').selectAll().where('workspace_id', '=', gov.workspace_id).where('day', '<', today);
  if (gov.warmup_through_day) q = q.where('day', '>', gov.warmup_through_day);
  const days = await q.orderBy('day').execute();
  if (days.length === 0) return gov.warmup_allowance;
  let allowance = gov.warmup_allowance;
  for (const d of days) {
    if (d.sent === 0 && d.reserved === 0) continue;
    if (isCleanDay(d, allowance)) allowance = Math.min(allowance * 2, WARMUP_CAP);
  }
  const through = days[days.length - 1].day;
  await tx.db
    .updateTable('broadcast_governance')
    .set({ warmup_allowance: allowance, warmup_through_day: through, updated_at: iso(tx.clock.now()) })
    .where('workspace_id', '=', gov.workspace_id)
    .execute();
  gov.warmup_allowance = allowance;
  gov.warmup_through_day = through;
  return allowance;
}

export function isCleanDay(d: { sent: number; bounced: number; complained: number; rate_pauses: number }, allowance: number): boolean {
  return (
    d.sent > 0 &&
    d.sent * 2 >= allowance &&
    d.bounced * 100 < CLEAN_DAY.bouncePercent * d.sent &&
    d.complained * 1000 < CLEAN_DAY.complaintPerThousand * d.sent &&
    d.rate_pauses === 0
  );
}

function smallest(parts: Allowance['parts']): number {
  return Math.min(parts.warmup, parts.workspace ?? Infinity, parts.server ?? Infinity);
}

/** Today's limit and what is taken of it (folds finished days into the warm-up, so call it in a transaction). */
export async function todaysAllowance(ctx: Pick<Ctx, 'db' | 'clock' | 'config'>, workspaceId: string): Promise<Allowance> {
  const gov = await ensureGovernance(ctx, workspaceId);
  const day = utcDay(ctx.clock.now());
  const warmup = await currentWarmup(ctx, gov, day);
  const parts = { workspace: gov.daily_limit, server: ctx.config.broadcasts.dailyRecipients || null, warmup };
  const limit = smallest(parts);
  const row = await ctx.db
    .selectFrom('broadcast_daily_totals')
    .select('reserved')
    .where('workspace_id', '=', workspaceId)
    .where('day', '=', day)
    .executeTakeFirst();
  const reserved = row?.reserved ?? 0;
  return { day, limit, reserved, remaining: Math.max(0, limit - reserved), parts };
}

async function ensureDay(db: Db, workspaceId: string, day: string): Promise<void> {
  await db
    .insertInto('broadcast_daily_totals')
    .values({ workspace_id: workspaceId, day })
    .onConflict((oc) => oc.columns(['workspace_id', 'day']).doNothing())
    .execute();
}

/**
 * Takes up to `wanted` recipients from today's allowance; returns how many were granted. Run it in
 * the claiming transaction: on Postgres the day's row is locked, so concurrent broadcasts of one
 * workspace never take more than the limit together (SQLite write transactions are exclusive).
 */
export async function reserveAllowance(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config' | 'dialect'>,
  workspaceId: string,
  wanted: number,
): Promise<{ granted: number; allowance: Allowance }> {
  const day = utcDay(ctx.clock.now());
  await ensureDay(ctx.db, workspaceId, day);
  let locked = ctx.db.selectFrom('broadcast_daily_totals').select('reserved').where('workspace_id', '=', workspaceId).where('day', '=', day);
  if (ctx.dialect === 'postgres') locked = locked.forUpdate();
  await locked.executeTakeFirstOrThrow();
  const allowance = await todaysAllowance(ctx, workspaceId);
  const granted = Math.max(0, Math.min(wanted, allowance.remaining));
  if (granted > 0) {
    await ctx.db
      .updateTable('broadcast_daily_totals')
      .set((eb) => ({ reserved: eb('reserved', '+', granted) }))
      .where('workspace_id', '=', workspaceId)
      .where('day', '=', day)
      .execute();
  }
  return { granted, allowance: { ...allowance, reserved: allowance.reserved + granted, remaining: allowance.remaining - granted } };
}

/** Gives back recipients taken from a day's allowance that were not sent (a sender-level failure). */
export async function releaseAllowance(db: Db, workspaceId: string, day: string, count: number): Promise<void> {
  if (count <= 0) return;
  await db
    .updateTable('broadcast_daily_totals')
    .set({ reserved: sql<number>`case when reserved > ${count} then reserved - ${count} else 0 end` })
    .where('workspace_id', '=', workspaceId)
    .where('day', '=', day)
    .execute();
}

/** Adds to a day's totals (the row is created when missing). */
export async function addDayTotals(
  db: Db,
  workspaceId: string,
  day: string,
  add: Partial<Record<'sent' | 'failed' | 'bounced' | 'complained' | 'rate_pauses', number>>,
): Promise<void> {
  const entries = Object.entries(add).filter(([, v]) => v) as [keyof typeof add, number][];
  if (!entries.length) return;
  await ensureDay(db, workspaceId, day);
  await db
    .updateTable('broadcast_daily_totals')
    .set((eb) => Object.fromEntries(entries.map(([k, v]) => [k, eb(k, '+', v)])))
    .where('workspace_id', '=', workspaceId)
    .where('day', '=', day)
    .execute();
}

// ---- 30-day rates and the automatic suspension ----

export interface Rates {
  sent: number;
  bounced: number;
  complained: number;
}

/** Mails of the last 30 UTC days (today included) and the bounces and complaints they drew. */
export async function thirtyDayRates(ctx: Pick<Ctx, 'db' | 'clock'>, workspaceId: string): Promise<Rates> {
  const since = daysBefore(utcDay(ctx.clock.now()), RATE_WINDOW_DAYS - 1);
  const row = await ctx.db
    .selectFrom('broadcast_daily_totals')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('sent'), eb.lit(0)).as('sent'),
      eb.fn.coalesce(eb.fn.sum<number>('bounced'), eb.lit(0)).as('bounced'),
      eb.fn.coalesce(eb.fn.sum<number>('complained'), eb.lit(0)).as('complained'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('day', '>=', since)
    .executeTakeFirstOrThrow();
  return { sent: Number(row.sent), bounced: Number(row.bounced), complained: Number(row.complained) };
}

export function percent(part: number, whole: number): string {
  return whole === 0 ? '0.00 %' : `${((part * 100) / whole).toFixed(2)} %`;
}

export function describeRates(r: Rates): string {
  return `last 30 days: ${r.sent} broadcast mails, complaint rate ${percent(r.complained, r.sent)} (${r.complained}), bounce rate ${percent(r.bounced, r.sent)} (${r.bounced})`;
}

/** Which automatic-suspension rule the rates break, if any (integer arithmetic: exact at the boundaries). */
export function suspensionCause(r: Rates): 'complaint_rate' | 'bounce_rate' | undefined {
  if (r.sent >= SUSPEND_COMPLAINTS.minMails && r.complained * 1000 >= SUSPEND_COMPLAINTS.perThousand * r.sent) return 'complaint_rate';
  if (r.sent >= SUSPEND_BOUNCES.minMails && r.bounced * 100 >= SUSPEND_BOUNCES.percent * r.sent) return 'bounce_rate';
  return undefined;
}

/** After feedback: suspends the workspace when its 30-day rates break a rule (and tells the operator). */
export async function checkAutomaticSuspension(ctx: Ctx, workspaceId: string): Promise<boolean> {
  const gov = await governanceRow(ctx.db, workspaceId);
  if (gov?.status === 'suspended') return false;
  const rates = await thirtyDayRates(ctx, workspaceId);
  const cause = suspensionCause(rates);
  if (!cause) return false;
  const workspace = await findWorkspace(ctx.db, workspaceId);
  if (!workspace) return false;
  const reason = `suspended automatically for its ${cause === 'complaint_rate' ? 'complaint' : 'bounce'} rate; ${describeRates(rates)}`;
  const { paused } = await suspendBroadcasts(ctx, workspace, reason, 'automatic');
  await addDigestLine(ctx, {
    kind: 'workspace_suspended',
    workspaceId,
    text: `workspace ${JSON.stringify(workspace.name)} (${workspaceId}) ${reason}; ${paused.length} running broadcast(s) paused. Lift it with: svc workspace broadcasts approve --workspace ${workspaceId}`,
  });
  return true;
}
