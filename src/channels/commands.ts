import { defineCommand } from 'citty';
import { dbCommand, parseBooleanFlag, parseIntFlag, readSecretFile, repeated, UsageError } from '../cli.js';
import { resolveInbox } from '../inboxes/service.js';
import { resolveWorkspace } from '../workspaces/service.js';
import { createChatChannel, createEmailChannel, formatChannel, listChannels, type TlsMode } from './service.js';

const target = {
  workspace: { type: 'string', required: true, description: 'workspace id or exact name' },
  inbox: { type: 'string', required: true, description: 'inbox id or slug' },
} as const;

const createEmail = dbCommand({
  meta: { name: 'create-email', description: 'Create an e-mail channel and print its id' },
  args: {
    ...target,
    name: { type: 'string', required: true },
    address: { type: 'string', required: true, description: 'the channel’s e-mail address' },
    'display-name': { type: 'string' },
    'from-address': { type: 'string' },
    'smtp-host': { type: 'string' },
    'smtp-port': { type: 'string' },
    tls: { type: 'string', description: 'starttls, tls or none' },
    'smtp-username': { type: 'string' },
    'smtp-password-file': { type: 'string', description: 'file holding the SMTP password, or - for standard input' },
  },
  async run({ app, args, io }) {
    if (args.tls !== undefined && !['starttls', 'tls', 'none'].includes(args.tls)) throw new UsageError('--tls must be starttls, tls or none');
    if (io.rawArgs.some((a) => a === '--smtp-password' || a.startsWith('--smtp-password='))) {
      throw new UsageError('the SMTP password is never taken from the command line; use --smtp-password-file <path> or - for standard input');
    }
    const ws = await resolveWorkspace(app, args.workspace);
    const inbox = await resolveInbox(app, ws.id, args.inbox);
    const password = args['smtp-password-file'] !== undefined ? readSecretFile(args['smtp-password-file']) : undefined;
    const channel = await createEmailChannel(app, {
      workspaceId: ws.id,
      inboxId: inbox.id,
      name: args.name,
      address: args.address,
      displayName: args['display-name'],
      fromAddress: args['from-address'],
      smtpHost: args['smtp-host'],
      smtpPort: parseIntFlag(args['smtp-port'], 'smtp-port', 1),
      tls: args.tls as TlsMode | undefined,
      smtpUsername: args['smtp-username'],
      smtpPassword: password,
    });
    io.say(`created e-mail channel ${channel.address}${channel.forwarding_address ? ` (forwarding address ${channel.forwarding_address})` : ''}`);
    io.out(channel.id);
  },
});

const createChat = dbCommand({
  meta: { name: 'create-chat', description: 'Create a chat channel; prints its id and public key separated by a tab' },
  args: {
    ...target,
    name: { type: 'string', required: true },
    origin: { type: 'string', required: true, description: 'an allowed site origin (repeatable)' },
    'allow-anonymous': { type: 'boolean' },
    'ask-email-offline': { type: 'string', description: 'ask visitors for their e-mail when nobody is online (default true)' },
    greeting: { type: 'string' },
  },
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const inbox = await resolveInbox(app, ws.id, args.inbox);
    const channel = await createChatChannel(app, {
      workspaceId: ws.id,
      inboxId: inbox.id,
      name: args.name,
      origins: repeated(io.rawArgs, 'origin'),
      allowAnonymous: args['allow-anonymous'] === true,
      askEmailOffline: parseBooleanFlag(args['ask-email-offline'], 'ask-email-offline') ?? true,
      greeting: args.greeting,
    });
    io.out(`${channel.id}\t${channel.public_key}`);
  },
});

const list = dbCommand({
  meta: { name: 'list', description: 'List an inbox’s channels (SMTP password only as set or not set)' },
  args: target,
  async run({ app, args, io }) {
    const ws = await resolveWorkspace(app, args.workspace);
    const inbox = await resolveInbox(app, ws.id, args.inbox);
    io.out(['id', 'kind', 'name', 'address_or_public_key', 'details'].join('\t'));
    for (const ch of (await listChannels(app, ws.id, inbox.id)).map((ch) => formatChannel(ch, app.config))) {
      if (ch.kind === 'chat' && 'public_key' in ch) {
        io.out(
          [
            ch.id,
            ch.kind,
            ch.name,
            ch.public_key,
            `origins=${ch.origins.join(',')} allow_anonymous=${ch.allow_anonymous} ask_email_offline=${ch.ask_email_offline}`,
          ].join('\t'),
        );
      } else if ('address' in ch) {
        const smtp = ch.smtp
          ? `smtp=${ch.smtp.host}:${ch.smtp.port} tls=${ch.smtp.tls} user=${ch.smtp.username ?? '-'} password=${ch.smtp.password_set ? 'set' : 'not set'}`
          : 'smtp=none';
        io.out([ch.id, ch.kind, ch.name, ch.address, `${smtp}${ch.forwarding_address ? ` forwarding=${ch.forwarding_address}` : ''}`].join('\t'));
      }
    }
  },
});

export const channelCommand = defineCommand({
  meta: { name: 'channel', description: 'Channels' },
  subCommands: { 'create-email': createEmail, 'create-chat': createChat, list },
});
