#!/usr/bin/env node
// The `svc` binary: one program for the server and every operator command. This is the command table.
import { defineCommand, runCommand, showUsage, type CommandDef } from 'citty';
import { apiKeyCommand } from './api-keys/commands.js';
import { channelCommand } from './channels/commands.js';
import { ExitSignal } from './cli.js';
import { inboxCommand } from './inboxes/commands.js';
import { ingestEmailCommand } from './mail/commands.js';
import { vapidKeysCommand } from './push/commands.js';
import { migrateCommand, serveCommand } from './server/commands.js';
import { readVersion } from './version.js';
import { bootstrapCommand } from './workspaces/commands.js';

const main = defineCommand({
  meta: { name: 'svc', version: readVersion(), description: 'Self-hosted customer conversation server' },
  default: 'serve',
  subCommands: {
    serve: serveCommand,
    migrate: migrateCommand,
    bootstrap: bootstrapCommand,
    'api-key': apiKeyCommand,
    inbox: inboxCommand,
    channel: channelCommand,
    'ingest-email': ingestEmailCommand,
    'vapid-keys': vapidKeysCommand,
  },
});

/** The command that rawArgs name, for --help. */
function resolve(cmd: CommandDef, args: string[]): [CommandDef, CommandDef | undefined] {
  let current = cmd;
  let parent: CommandDef | undefined;
  for (const arg of args) {
    const subs = current.subCommands as Record<string, CommandDef> | undefined;
    if (arg.startsWith('-') || !subs?.[arg]) break;
    parent = current;
    current = subs[arg];
  }
  return [current, parent];
}

async function run(rawArgs: string[]) {
  if (rawArgs.includes('--help') || rawArgs.includes('-h')) {
    await showUsage(...resolve(main, rawArgs));
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
