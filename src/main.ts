#!/usr/bin/env node
// The `svc` binary: one program for the server and every operator command. This is the command table.
import { type CommandDef, defineCommand, runCommand, showUsage } from 'citty';
import { ExitSignal } from './platform/errors.js';
import { holdYoungGeneration } from './platform/heap.js';
import { readVersion } from './version.js';

// `serve` (the default command) starts with the young generation held at its start size (./platform/heap.ts).
const command = process.argv.slice(2).find((a) => !a.startsWith('-'));
if (command === undefined || command === 'serve') holdYoungGeneration();

const main = defineCommand({
  meta: { name: 'svc', version: readVersion(), description: 'Self-hosted customer conversation server' },
  default: 'serve',
  // Loaded on demand, so that a command pays only for the modules it uses.
  subCommands: {
    serve: () => import('./server/commands.js').then((m) => m.serveCommand),
    migrate: () => import('./server/commands.js').then((m) => m.migrateCommand),
    bootstrap: () => import('./workspaces/commands.js').then((m) => m.bootstrapCommand),
    workspace: () => import('./workspaces/commands.js').then((m) => m.workspaceCommand),
    'api-key': () => import('./api-keys/commands.js').then((m) => m.apiKeyCommand),
    inbox: () => import('./inboxes/commands.js').then((m) => m.inboxCommand),
    channel: () => import('./channels/commands.js').then((m) => m.channelCommand),
    'vapid-keys': () => import('./push/commands.js').then((m) => m.vapidKeysCommand),
    'ingest-email': () =>
      Promise.all([import('./mail/commands.js'), import('./server/mail-handlers.js')]).then(([m, table]) => m.ingestEmailCommand(table.mailHandlers)),
    person: () => import('./people/commands.js').then((m) => m.personCommand),
    backup: () => import('./backup/commands.js').then((m) => m.backupCommand),
    restore: () => import('./backup/commands.js').then((m) => m.restoreCommand),
    analytics: () => import('./analytics/commands.js').then((m) => m.analyticsCommand),
  },
});

type Lazy<T> = T | Promise<T> | (() => T | Promise<T>);
const load = async <T>(v: Lazy<T>): Promise<T> => (typeof v === 'function' ? (v as () => T | Promise<T>)() : v);

/** The command that rawArgs name, for --help. */
async function resolve(cmd: CommandDef, args: string[]): Promise<[CommandDef, CommandDef | undefined]> {
  let current = cmd;
  let parent: CommandDef | undefined;
  for (const arg of args) {
    const subs = (await load(current.subCommands as Lazy<Record<string, Lazy<CommandDef>>> | undefined)) ?? {};
    if (arg.startsWith('-') || !subs[arg]) break;
    parent = current;
    current = await load(subs[arg]);
  }
  return [current, parent];
}

async function run(rawArgs: string[]) {
  if (rawArgs.includes('--help') || rawArgs.includes('-h')) {
    await showUsage(...(await resolve(main, rawArgs)));
    return;
  }
  if (rawArgs.length === 1 && (rawArgs[0] === '--version' || rawArgs[0] === '-v')) {
    process.stdout.write(readVersion() + '\n');
    return;
  }
  await runCommand(main, { rawArgs });
}

process.on('unhandledRejection', (reason) => {
  if (reason instanceof ExitSignal) return;
  throw reason;
});

run(process.argv.slice(2)).catch((error) => {
  if (!(error instanceof ExitSignal)) {
    // citty's own refusals (missing argument, unknown command) are usage errors.
    const message = (error instanceof Error ? error.message : String(error)).replace(/\x1b\[[0-9;]*m/g, '');
    process.stderr.write(`error: ${message}\n`);
    process.exitCode = 2;
  }
  process.exitCode ||= 1;
});
