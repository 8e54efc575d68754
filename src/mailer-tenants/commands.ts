// `svc inbox mailer-tenant show|sync|reinstate`.
import { defineCommand } from 'citty';
import { channelsOfInbox } from '../channels/store.js';
import { dbCommand, UsageError } from '../cli.js';
import type { App } from '../context.js';
import { listInboxes, resolveInbox } from '../inboxes/service.js';
import { liveInboxesOf } from '../inboxes/store.js';
import { liveWorkspaceIds, resolveWorkspace } from '../workspaces/service.js';
import { mailerProvider } from './provider.js';
import { pausedByText, reinstateTenant, upkeepInbox } from './service.js';

async function inboxesOf(app: App, workspaceRef: string, inboxRef?: string) {
  const ws = await resolveWorkspace(app, workspaceRef);
  if (inboxRef) return [await resolveInbox(app, ws.id, inboxRef)];
  return listInboxes(app, ws.id);
}

const show = dbCommand({
  meta: { name: 'show', description: 'Each inbox’s stored tenant state, sending status, cause, associated resources and channels (no provider call)' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    inbox: { type: 'string', description: 'inbox id or slug (default: every inbox)' },
  },
  async run({ app, args, io }) {
    const inboxes = await inboxesOf(app, args.workspace, args.inbox);
    const out: string[] = [];
    if (!app.config.mailer) io.say('the tenant feature is off (SVC_MAILER_* are not set); showing what is stored');
    for (const inbox of inboxes) {
      const t = await app.db.selectFrom('mailer_tenants').selectAll().where('inbox_id', '=', inbox.id).executeTakeFirst();
      const emailChannels = await channelsOfInbox(app.db, inbox.id, 'email');
      const checks = emailChannels.length
        ? await app.db
            .selectFrom('mailer_channels')
            .select(['channel_id', 'managed', 'reason'])
            .where(
              'channel_id',
              'in',
              emailChannels.map((c) => c.id),
            )
            .execute()
        : [];
      const checkOf = new Map(checks.map((c) => [c.channel_id, c]));
      const channels = emailChannels.map((c) => ({
        id: c.id,
        address: c.address,
        managed: checkOf.get(c.id)?.managed ?? null,
        reason: checkOf.get(c.id)?.reason ?? null,
      }));
      out.push(`inbox\t${inbox.slug} (${inbox.id}) ${JSON.stringify(inbox.name)}`);
      if (!t) {
        out.push('tenant\tnone');
      } else {
        out.push(`tenant\t${t.tenant_name} (${t.state}${t.tenant_arn ? `, ${t.tenant_arn}` : ''})`);
        out.push(
          `sending status\t${t.sending_status ?? 'unknown'}${t.paused_by ? `, paused by ${pausedByText(t.paused_by)}` : ''}${t.status_checked_at ? ` (read ${t.status_checked_at})` : ''}`,
        );
        out.push(`cause\t${t.cause ?? '-'}`);
        if (t.sending_status === 'DISABLED' && t.paused_by === 'provider')
          out.push('note\tAmazon SES itself paused this tenant: only a case with AWS support lifts it');
        if (t.sending_status === 'DISABLED' && t.paused_by === 'reputation_policy')
          out.push(
            `note\tthe reputation policy paused this tenant: svc inbox mailer-tenant reinstate --workspace ${inbox.workspace_id} --inbox ${inbox.id} lifts it`,
          );
        const resources = JSON.parse(t.resources) as { type: string; arn: string }[];
        out.push(`resources\t${resources.map((r) => `${r.type} ${r.arn}`).join(', ') || '-'}`);
        if (t.last_error) out.push(`last error\t${t.last_error} (${t.last_error_at})`);
      }
      for (const c of channels)
        out.push(
          `channel\t${c.id} ${c.address} ${c.managed === 1 ? 'managed' : c.managed === 0 ? 'not managed' : 'not checked'}${c.reason ? `: ${c.reason}` : ''}`,
        );
      out.push('');
    }
    io.out(out.join('\n').trimEnd());
  },
});

const sync = dbCommand({
  meta: { name: 'sync', description: 'Create and update tenants at the provider and refresh their status, one line per inbox; --all is the back-fill' },
  args: {
    workspace: { type: 'string', description: 'workspace id or exact name' },
    inbox: { type: 'string', description: 'inbox id or slug' },
    all: { type: 'boolean', description: 'every inbox of every workspace' },
    'dry-run': { type: 'boolean', description: 'only print the intended changes' },
  },
  async run({ app, args, io }) {
    if (!!args.all === !!args.workspace) throw new UsageError('give --workspace <ws> (optionally --inbox) or --all');
    if (args.all && args.inbox) throw new UsageError('--inbox goes with --workspace');
    try {
      const inboxes = args.all ? await liveInboxesOf(app.db, await liveWorkspaceIds(app)) : await inboxesOf(app, args.workspace!, args.inbox);
      let failed = 0;
      for (const inbox of inboxes) {
        const r = await upkeepInbox(app, inbox.id, { dryRun: args['dry-run'] === true });
        if (r.error) failed++;
        io.out([inbox.id, inbox.slug, r.error ? `error: ${r.error}` : `${r.actions.join('; ')}${r.status ? `; status ${r.status}` : ''}`].join('\t'));
      }
      if (failed) io.say(`${failed} inbox(es) failed; the errors are stored and shown by svc inbox mailer-tenant show`);
      if (failed) process.exitCode = 1;
    } finally {
      mailerProvider(app)?.close();
    }
  },
});

const reinstate = dbCommand({
  meta: { name: 'reinstate', description: 'Lift a pause that came from the reputation policy; a member then resumes broadcasts' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    inbox: { type: 'string', required: true, description: 'inbox id or slug' },
  },
  async run({ app, args, io }) {
    try {
      const [inbox] = await inboxesOf(app, args.workspace, args.inbox);
      const t = await reinstateTenant(app, inbox.id);
      io.say(`tenant ${t.tenant_name} reinstated (status ${t.sending_status}); paused broadcasts stay paused until a member resumes them`);
    } finally {
      mailerProvider(app)?.close();
    }
  },
});

export const mailerTenantCommand = defineCommand({
  meta: { name: 'mailer-tenant', description: 'Amazon SES tenants of the inboxes (SVC_MAILER_*)' },
  subCommands: { show, sync, reinstate },
});
