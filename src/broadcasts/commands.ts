// `svc workspace broadcasts approve|deny|suspend|limit|show`: the operator's side of governance.
import { defineCommand } from 'citty';
import { dbCommand, parseIntFlag, UsageError } from '../cli.js';
import { charCount } from '../platform/text.js';
import { resolveWorkspace } from '../workspaces/service.js';
import { approveBroadcasts, denyBroadcasts, REASON_MAX, setDailyLimit, suspendBroadcasts } from './governance.js';
import { governanceOverview } from './overview.js';

const target = { workspace: { type: 'string', required: true, description: 'workspace id or exact name' } } as const;
const withReason = { ...target, reason: { type: 'string', description: `up to ${REASON_MAX} characters, shown to the workspace’s owners` } } as const;

function checkReason(reason: string | undefined): string | undefined {
  if (reason !== undefined && charCount(reason.trim()) > REASON_MAX) throw new UsageError(`--reason must be at most ${REASON_MAX} characters`);
  return reason;
}

const approve = dbCommand({
  meta: {
    name: 'approve',
    description: 'Let the workspace send broadcasts (also lifts a suspension; paused broadcasts stay paused until a member resumes them)',
  },
  args: withReason,
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    await approveBroadcasts(app, ws, checkReason(args.reason));
    io.say(`broadcasts approved for workspace ${JSON.stringify(ws.name)} (${ws.id}); paused broadcasts stay paused until a member resumes them`);
  },
});

const deny = dbCommand({
  meta: { name: 'deny', description: 'Answer the approval request with no (the workspace may ask again)' },
  args: withReason,
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    await denyBroadcasts(app, ws, checkReason(args.reason));
    io.say(`broadcasts denied for workspace ${JSON.stringify(ws.name)} (${ws.id})`);
  },
});

const suspend = dbCommand({
  meta: { name: 'suspend', description: 'Refuse scheduling and resuming; running broadcasts pause (reason workspace_suspended)' },
  args: withReason,
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const { paused } = await suspendBroadcasts(app, ws, checkReason(args.reason), 'operator');
    io.say(`broadcasts suspended for workspace ${JSON.stringify(ws.name)} (${ws.id}); ${paused.length} running broadcast(s) paused`);
  },
});

const limit = dbCommand({
  meta: { name: 'limit', description: 'Recipients per UTC day across the workspace’s broadcasts; 0 removes this limit only' },
  args: { ...target, daily: { type: 'string', required: true, description: 'recipients per UTC day (0 removes the workspace limit)' } },
  async run({ app, args, io }) {
    const daily = parseIntFlag(args.daily, 'daily', 0)!;
    const ws = await resolveWorkspace(app, args.workspace);
    await setDailyLimit(app, ws, daily);
    io.say(
      daily === 0
        ? `workspace limit removed for ${JSON.stringify(ws.name)} (${ws.id}); the server limit and the warm-up still apply`
        : `workspace ${JSON.stringify(ws.name)} (${ws.id}) may mail ${daily} recipients per UTC day (or less: the server limit and the warm-up also apply)`,
    );
  },
});

const show = dbCommand({
  meta: { name: 'show', description: 'Status and reason, daily limit and today’s count, last 30 days, sender domains, latest 10 broadcasts' },
  args: target,
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const o = await governanceOverview(app, ws);
    const d = o.daily;
    const part = (v: number | null) => (v === null ? 'none' : String(v));
    const lines = [
      `workspace\t${o.workspace.name} (${o.workspace.id}), made by ${o.workspace.origin}`,
      `mode\t${o.mode === 'approval' ? 'approval (workspaces made by sign-up need approval)' : 'on'}`,
      `status\t${o.status}${o.suspended_by ? ` (by ${o.suspended_by})` : ''}`,
      `reason\t${o.reason ?? '-'}`,
      `daily limit\t${d.limit} (workspace ${part(d.parts.workspace)}, server ${part(d.parts.server)}, warm-up ${d.parts.warmup})`,
      `today\t${d.reserved} of ${d.limit} recipients (UTC ${d.day})`,
      `last 30 days\t${o.last_30_days.sent} sent, bounce rate ${o.last_30_days.bounce_rate.toFixed(2)} % (${o.last_30_days.bounced}), complaint rate ${o.last_30_days.complaint_rate.toFixed(2)} % (${o.last_30_days.complained})`,
      `sender domains\t${o.sender_domains.join(', ') || '-'}`,
    ];
    if (o.request)
      lines.push(
        `approval request\t${o.request.requested_at} by ${o.request.email}; website: ${o.request.website}; who sends and what: ${o.request.senders}; how subscribers agreed: ${o.request.consent}`,
      );
    lines.push('latest broadcasts');
    lines.push(['id', 'status', 'pause_reason', 'recipients', 'sent', 'failed', 'bounced', 'complained', 'unsubscribed', 'created_at'].join('\t'));
    for (const b of o.latest)
      lines.push([b.id, b.status, b.pause_reason ?? '-', b.recipients, b.sent, b.failed, b.bounced, b.complained, b.unsubscribed, b.created_at].join('\t'));
    io.out(lines.join('\n'));
  },
});

export const broadcastsCommand = defineCommand({
  meta: { name: 'broadcasts', description: 'Broadcast governance of a workspace' },
  subCommands: { approve, deny, suspend, limit, show },
});
