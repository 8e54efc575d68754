import { defineCommand } from 'citty';
import { dbCommand } from '../cli.js';
import { checkLocale } from '../inboxes/service.js';
import { deleteWorkspace, describeSummary, summarizeWorkspace } from '../lifecycle/workspace-deletion.js';
import { createSignInLink, SIGN_IN_LINK_TTL_MS } from '../people/sign-in-links.js';
import { conflict, invalid } from '../platform/errors.js';
import { countWorkspaces, createWorkspace, resolveWorkspace } from './service.js';

export const bootstrapCommand = dbCommand({
  meta: { name: 'bootstrap', description: 'Create a workspace and its first owner; prints the workspace id' },
  args: {
    email: { type: 'string', required: true, description: 'the owner’s e-mail address' },
    workspace: { type: 'string', required: true, description: 'the workspace name' },
    name: { type: 'string', description: 'the owner’s name' },
    locale: { type: 'string', description: 'en or tr (default en)' },
    'allow-existing': { type: 'boolean', description: 'create it even when workspaces exist' },
  },
  async run({ app, args, io }) {
    const locale = args.locale ?? 'en';
    if (locale !== 'en' && locale !== 'tr') throw invalid('--locale must be en or tr');
    checkLocale(locale);
    if (!args['allow-existing'] && (await countWorkspaces(app)) > 0) {
      throw conflict('a workspace exists already; pass --allow-existing to create another');
    }
    const { workspace, personId } = await createWorkspace(app, {
      name: args.workspace,
      ownerEmail: args.email,
      ownerName: args.name,
      locale,
      origin: 'bootstrap',
    });
    const link = await createSignInLink(app, personId);
    io.say(`created workspace ${JSON.stringify(workspace.name)} with owner ${args.email.trim().toLowerCase()} (${personId})`);
    io.say(
      `sign in as the owner with this one-time link (it works once, for ${SIGN_IN_LINK_TTL_MS / 60_000} minutes; \`svc person sign-in-link --email …\` makes a new one):\n  ${link.url}` +
        (app.config.smtp
          ? '\nlater sign-ins: a code mailed to that address'
          : '\nSVC_SMTP_HOST is not set, so sign-in codes cannot be mailed; make links with svc person sign-in-link'),
    );
    io.out(workspace.id);
  },
});

const deleteWorkspaceCommand = dbCommand({
  meta: { name: 'delete', description: 'Delete a workspace; without --yes only says what it would delete' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    yes: { type: 'boolean', description: 'really delete it' },
  },
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const summary = describeSummary(await summarizeWorkspace(app, ws));
    if (!args.yes) {
      io.say(`would delete ${summary}; nothing was changed (pass --yes to delete)`);
      return;
    }
    await deleteWorkspace(app, { workspaceId: ws.id, requestedBy: 'operator' });
    io.say(`deleted ${summary}; it stopped working now and the running server removes the data in the background ("workspace deletion" log lines)`);
  },
});

export const workspaceCommand = defineCommand({
  meta: { name: 'workspace', description: 'Workspaces' },
  subCommands: {
    delete: deleteWorkspaceCommand,
    broadcasts: () => import('../broadcasts/commands.js').then((m) => m.broadcastsCommand),
    'analytics-limit': () => import('../analytics/commands.js').then((m) => m.analyticsLimitCommand),
  },
});
