// The governance state of one workspace as the operator (`svc workspace broadcasts show`) and the
// workspace's owners (GET /v1/workspace/broadcasts) see it.
import type { Ctx } from '../context.js';
import type { WorkspacesTable } from '../db/schema.js';
import {
  type Allowance,
  daysBefore,
  governanceRow,
  RATE_WINDOW_DAYS,
  type Rates,
  type ShownStatus,
  shownStatus,
  thirtyDayRates,
  todaysAllowance,
  utcDay,
} from './governance.js';

export interface GovernanceOverview {
  workspace: { id: string; name: string; origin: WorkspacesTable['origin'] };
  mode: 'on' | 'approval';
  status: ShownStatus;
  reason: string | null;
  suspended_by: 'operator' | 'automatic' | null;
  decided_at: string | null;
  daily: Allowance;
  last_30_days: Rates & { bounce_rate: number; complaint_rate: number };
  sender_domains: string[];
  request: { email: string | null; website: string | null; senders: string | null; consent: string | null; requested_at: string | null } | null;
  latest: {
    id: string;
    inbox_id: string;
    status: string;
    pause_reason: string | null;
    recipients: number;
    sent: number;
    failed: number;
    bounced: number;
    complained: number;
    unsubscribed: number;
    created_at: string;
  }[];
}

const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1_000_000) / 10_000);

export async function governanceOverview(
  ctx: Pick<Ctx, 'db' | 'clock' | 'config'>,
  workspace: Pick<WorkspacesTable, 'id' | 'name' | 'origin'>,
): Promise<GovernanceOverview> {
  const daily = await ctx.db.transaction().execute((trx) => todaysAllowance({ ...ctx, db: trx }, workspace.id));
  const gov = await governanceRow(ctx.db, workspace.id);
  const rates = await thirtyDayRates(ctx, workspace.id);
  const since = `${daysBefore(utcDay(ctx.clock.now()), RATE_WINDOW_DAYS - 1)}T00:00:00.000Z`;
  const domains = await ctx.db
    .selectFrom('broadcasts')
    .select('sender_domain')
    .distinct()
    .where('workspace_id', '=', workspace.id)
    .where('sender_domain', 'is not', null)
    .where('started_at', '>=', since)
    .orderBy('sender_domain')
    .execute();
  const latest = await ctx.db.selectFrom('broadcasts').selectAll().where('workspace_id', '=', workspace.id).orderBy('id', 'desc').limit(10).execute();
  return {
    workspace: { id: workspace.id, name: workspace.name, origin: workspace.origin },
    mode: ctx.config.broadcasts.mode as 'on' | 'approval',
    status: shownStatus(ctx.config, workspace, gov),
    reason: gov?.reason ?? null,
    suspended_by: gov?.status === 'suspended' ? gov.suspended_by : null,
    decided_at: gov?.decided_at ?? null,
    daily,
    last_30_days: { ...rates, bounce_rate: rate(rates.bounced, rates.sent), complaint_rate: rate(rates.complained, rates.sent) },
    sender_domains: domains.map((d) => d.sender_domain!),
    request: gov?.requested_at
      ? { email: gov.request_email, website: gov.request_website, senders: gov.request_senders, consent: gov.request_consent, requested_at: gov.requested_at }
      : null,
    latest: latest.map((b) => ({
      id: b.id,
      inbox_id: b.inbox_id,
      status: b.status,
      pause_reason: b.pause_reason,
      recipients: b.recipients_count,
      sent: b.sent_count,
      failed: b.failed_count,
      bounced: b.bounced_count,
      complained: b.complained_count,
      unsubscribed: b.unsubscribed_count,
      created_at: b.created_at,
    })),
  };
}
