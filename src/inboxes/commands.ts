import { defineCommand } from 'citty';
import { dbCommand, parseIntFlag } from '../cli.js';
import { invalid } from '../platform/errors.js';
import { resolveWorkspace } from '../workspaces/service.js';
import { createInbox, formatInbox, listInboxes } from './service.js';

const create = dbCommand({
  meta: { name: 'create', description: 'Create an inbox and print its id' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    name: { type: 'string', required: true },
    slug: { type: 'string', description: 'default: derived from the name' },
    locale: { type: 'string', description: 'language tag (default en)' },
    timezone: { type: 'string', description: 'zone name (default UTC)' },
    mode: { type: 'string', description: 'live or async (default async)' },
    'expected-reply-minutes': { type: 'string' },
  },
  async run({ app, args, io }) {
    if (args.mode !== undefined && args.mode !== 'live' && args.mode !== 'async') throw invalid('--mode must be live or async');
    const ws = await resolveWorkspace(app, args.workspace);
    const inbox = await createInbox(app, {
      workspaceId: ws.id,
      name: args.name,
      slug: args.slug,
      locale: args.locale,
      timezone: args.timezone,
      mode: args.mode as 'live' | 'async' | undefined,
      expectedReplyMinutes: parseIntFlag(args['expected-reply-minutes'], 'expected-reply-minutes', 1),
    });
    io.say(`created inbox ${JSON.stringify(inbox.name)} (slug ${inbox.slug}); its identity secret is rotated and shown in the panel`);
    io.out(inbox.id);
  },
});

const list = dbCommand({
  meta: { name: 'list', description: 'List inboxes' },
  args: { workspace: { type: 'string', required: true, description: 'workspace id or exact name' } },
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    io.out(['id', 'slug', 'name', 'locale', 'timezone', 'mode', 'expected_reply_minutes'].join('\t'));
    for (const i of (await listInboxes(app, ws.id)).map(formatInbox)) {
      io.out([i.id, i.slug, i.name, i.locale, i.timezone, i.mode, i.expected_reply_minutes ?? '-'].join('\t'));
    }
  },
});

export const inboxSubCommands = {
  create,
  list,
  'mailer-tenant': () => import('../mailer-tenants/commands.js').then((m) => m.mailerTenantCommand),
};
export const inboxCommand = defineCommand({ meta: { name: 'inbox', description: 'Inboxes' }, subCommands: inboxSubCommands });
