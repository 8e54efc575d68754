import { defineCommand } from 'citty';
import { SCOPES } from '../auth/access.js';
import { dbCommand, repeated } from '../cli.js';
import { resolveInbox } from '../inboxes/service.js';
import { resolveWorkspace } from '../workspaces/service.js';
import { createApiKey, formatApiKey, listApiKeys, revokeApiKey } from './service.js';

const create = dbCommand({
  meta: { name: 'create', description: 'Create a key and print its secret (once)' },
  args: {
    workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
    name: { type: 'string', required: true, description: 'what the key is for' },
    scope: { type: 'string', description: `a scope (repeatable): ${SCOPES.join(', ')}; default every scope` },
    inbox: { type: 'string', description: 'an inbox id or slug the key is limited to (repeatable); default every inbox' },
  },
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const inboxIds = [];
    for (const ref of repeated(io.rawArgs, 'inbox')) inboxIds.push((await resolveInbox(app, ws.id, ref)).id);
    const { key, secret } = await createApiKey(app, { workspaceId: ws.id, name: args.name, scopes: repeated(io.rawArgs, 'scope'), inboxIds });
    const shown = formatApiKey(key);
    io.say(
      `created API key ${key.id} (${key.prefix}…) with scopes ${shown.scopes.join(', ')}${shown.inbox_ids ? ` limited to ${shown.inbox_ids.join(', ')}` : ''}; the secret is shown only now`,
    );
    io.out(secret);
  },
});

const list = dbCommand({
  meta: { name: 'list', description: 'List keys (never secrets)' },
  args: { workspace: { type: 'string', required: true, description: 'workspace id or exact name' } },
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const keys = (await listApiKeys(app, ws.id)).map(formatApiKey);
    io.out(['id', 'prefix', 'name', 'created', 'last_used', 'revoked', 'expires', 'inboxes', 'scopes'].join('\t'));
    for (const k of keys) {
      io.out(
        [
          k.id,
          k.prefix,
          k.name,
          k.created_at,
          k.last_used_at ?? '-',
          k.revoked_at ?? '-',
          k.expires_at ?? '-',
          k.inbox_ids?.join(',') ?? 'all',
          k.scopes.join(','),
        ].join('\t'),
      );
    }
  },
});

const revoke = dbCommand({
  meta: { name: 'revoke', description: 'Revoke a key' },
  args: { id: { type: 'positional', required: true, description: 'the key id' } },
  async run({ app, args, io }) {
    const key = await revokeApiKey(app, args.id);
    io.say(`revoked ${key.id} (${key.prefix}…)`);
  },
});

export const apiKeyCommand = defineCommand({ meta: { name: 'api-key', description: 'Workspace API keys' }, subCommands: { create, list, revoke } });
