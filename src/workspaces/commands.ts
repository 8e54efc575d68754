import { defineCommand } from 'citty';
import { dbCommand } from '../cli.js';
import { checkLocale } from '../inboxes/service.js';
import { conflict, invalid } from '../platform/errors.js';
import { countWorkspaces, createWorkspace } from './service.js';

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
    io.say(`created workspace ${JSON.stringify(workspace.name)} with owner ${args.email.trim().toLowerCase()} (${personId}); they sign in with a code mailed to that address`);
    io.out(workspace.id);
  },
});

export const workspaceCommand = defineCommand({
  meta: { name: 'workspace', description: 'Workspaces' },
  subCommands: {
    broadcasts: () => import('../broadcasts/commands.js').then((m) => m.broadcastsCommand),
  },
});
