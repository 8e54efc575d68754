// Operator commands: `svc analytics property create|list` and `svc workspace analytics-limit`.
import { defineCommand } from 'citty';
import { configCommand, dbCommand, parseIntFlag, UsageError } from '../cli.js';
import { resolveWorkspace } from '../workspaces/service.js';
import { updateGeoip } from './geoip-update.js';
import { createProperty, eventsThisMonth, listProperties, setMonthlyLimit, workspaceUsage } from './properties.js';

const createPropertyCommand = dbCommand({
  meta: { name: 'create', description: 'Count a website; prints the property id' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    domain: { type: 'string', required: true, description: 'the site’s host name, such as example.com' },
    name: { type: 'string', description: 'a name for people (default: the domain)' },
    subdomains: { type: 'boolean', description: 'count pages on subdomains of the domain too' },
    'chat-channel': { type: 'string', description: 'the chat channel whose widget runs on the site (ties visits to conversations)' },
  },
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const p = await createProperty(app, {
      workspaceId: ws.id,
      domain: args.domain,
      name: args.name,
      subdomains: args.subdomains === true,
      chatChannelId: args['chat-channel'],
    });
    io.say(`counting ${p.domain}${p.subdomains ? ' and its subdomains' : ''} for workspace ${JSON.stringify(ws.name)}; add the tracker to its pages:`);
    io.say(`  <script defer src="${app.config.publicUrl}/a.js" data-domain="${p.domain}"></script>`);
    io.out(p.id);
  },
});

const listPropertiesCommand = dbCommand({
  meta: { name: 'list', description: 'Websites counted: domain, id, events this month, linked chat channel' },
  args: { workspace: { type: 'string', description: 'only this workspace (id or exact name)' } },
  async run({ app, args, io }) {
    const ws = args.workspace ? await resolveWorkspace(app, args.workspace) : undefined;
    const rows = await listProperties(app, ws?.id);
    const counts = await eventsThisMonth(
      app,
      rows.map((r) => r.id),
    );
    if (!rows.length) io.say('no analytics properties');
    for (const r of rows) {
      io.out(`${r.domain}\t${r.id}\t${counts.get(r.id) ?? 0}\t${r.chat_channel_id ?? '-'}${ws ? '' : `\t${r.workspace_id}`}`);
    }
  },
});

export const analyticsCommand = defineCommand({
  meta: { name: 'analytics', description: 'Web analytics' },
  subCommands: {
    property: defineCommand({
      meta: { name: 'property', description: 'Websites counted for analytics' },
      subCommands: { create: createPropertyCommand, list: listPropertiesCommand },
    }),
    'geoip-update': () => geoipUpdateCommand,
  },
});

export const analyticsLimitCommand = dbCommand({
  meta: { name: 'analytics-limit', description: 'Set a workspace’s monthly analytics event limit (0 removes it)' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    monthly: { type: 'string', required: true, description: 'events per UTC month; 0 removes the workspace’s own limit' },
  },
  async run({ app, args, io }) {
    const monthly = parseIntFlag(args.monthly, 'monthly');
    if (monthly === undefined) throw new UsageError('--monthly is required');
    const ws = await resolveWorkspace(app, args.workspace);
    await setMonthlyLimit(app, ws.id, monthly);
    const usage = await workspaceUsage(app, ws.id);
    const limitText = usage.limit ? `${usage.limit} events a month${monthly === 0 ? ' (the server default)' : ''}` : 'no limit';
    io.say(`workspace ${JSON.stringify(ws.name)}: ${limitText}; ${usage.events} events counted in ${usage.month}${usage.limit ? ` (${usage.percent} %)` : ''}`);
  },
});

export const geoipUpdateCommand = configCommand({
  meta: { name: 'geoip-update', description: 'Fetch, check and install the location database; running servers load it without a restart' },
  args: {
    source: {
      type: 'string',
      description: 'maxmind (SVC_GEOIP_ACCOUNT_ID/SVC_GEOIP_LICENSE_KEY), dbip, an https URL or file:<path> (default maxmind when set, else dbip)',
    },
    edition: { type: 'string', description: 'country (default) or city' },
    sha256: { type: 'string', description: 'the expected SHA-256 of a URL or file download (a URL’s <url>.sha256 is used when present)' },
  },
  async run({ config, args, io }) {
    const r = await updateGeoip(config, { source: args.source, edition: args.edition, sha256: args.sha256 });
    io.say(`installed ${r.databaseType} from ${r.source} (sha256 ${r.sha256}) at ${r.file}; running servers load it within a minute`);
    if (r.attribution) io.say(`its licence asks for this attribution, shown on the dashboard: ${r.attribution}`);
  },
});
