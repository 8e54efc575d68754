// Shared plumbing of the `svc` commands: settings, the database, output streams and error lines.
import fs from 'node:fs';
import { type ArgsDef, type CommandDef, defineCommand, type ParsedArgs } from 'citty';
import { type Config, ConfigError, loadConfig } from './config.js';
import { type App, buildServices, verifyMasterKey } from './context.js';
import { pendingMigrations } from './db/migrator.js';
import { MasterKeyError } from './platform/crypto.js';
import { AppError, ExitSignal } from './platform/errors.js';
import { createLogger } from './platform/log.js';

export class UsageError extends Error {}

export interface CommandIO {
  /** stdout: only ids and secrets, so that scripts can capture them. */
  out(text: string): void;
  /** stderr: everything meant for the person at the terminal. */
  say(text: string): void;
  rawArgs: string[];
}

/** Every value of a repeatable flag (`--scope a --scope b`, `--scope=a`). */
export function repeated(rawArgs: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i];
    if (arg === `--${name}`) {
      const next = rawArgs[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`--${name} needs a value`);
      values.push(next);
      i++;
    } else if (arg.startsWith(`--${name}=`)) {
      values.push(arg.slice(name.length + 3));
    }
  }
  return values;
}

function checkFlags(rawArgs: string[], args: ArgsDef): void {
  const known = new Set<string>();
  for (const [name, def] of Object.entries(args)) {
    known.add(name);
    if (def.type === 'boolean') known.add(`no-${name}`);
  }
  for (const arg of rawArgs) {
    if (arg === '--') break;
    if (!arg.startsWith('--')) continue;
    const name = arg.slice(2).split('=')[0];
    if (!known.has(name)) throw new UsageError(`unknown option --${name}`);
  }
  for (const [name, def] of Object.entries(args)) {
    if (def.type !== 'string') continue;
    const i = rawArgs.findIndex((a) => a === `--${name}`);
    if (i !== -1 && (rawArgs[i + 1] === undefined || rawArgs[i + 1].startsWith('--'))) throw new UsageError(`--${name} needs a value`);
  }
}

function fail(message: string, code: number): never {
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = code;
  throw new ExitSignal();
}

export function handleCommandError(error: unknown): never {
  if (error instanceof ExitSignal) throw error;
  if (error instanceof UsageError) fail(error.message, 2);
  if (error instanceof ConfigError) fail(error.message, 2);
  if (error instanceof AppError) fail(error.message, 1);
  if (error instanceof MasterKeyError) fail(error.message, 1);
  const message = error instanceof Error ? error.message : String(error);
  fail(message, 1);
}

const io = (rawArgs: string[]): CommandIO => ({
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : text + '\n'),
  say: (text) => process.stderr.write(text.endsWith('\n') ? text : text + '\n'),
  rawArgs,
});

/** A command that needs only the settings (no database). */
export function configCommand<A extends ArgsDef>(def: {
  meta: CommandDef['meta'];
  args: A;
  run(input: { config: Config; args: ParsedArgs<A>; io: CommandIO }): Promise<void> | void;
}) {
  return defineCommand({
    meta: def.meta,
    args: def.args,
    async run({ args, rawArgs }) {
      try {
        checkFlags(rawArgs, def.args);
        await def.run({ config: loadConfig(), args: args as ParsedArgs<A>, io: io(rawArgs) });
      } catch (error) {
        handleCommandError(error);
      }
    },
  });
}

/** A command that works on the database: settings are checked, the schema must be current. */
export function dbCommand<A extends ArgsDef>(def: {
  meta: CommandDef['meta'];
  args: A;
  run(input: { app: App; args: ParsedArgs<A>; io: CommandIO }): Promise<void> | void;
}) {
  return defineCommand({
    meta: def.meta,
    args: def.args,
    async run({ args, rawArgs }) {
      let app: App | undefined;
      try {
        checkFlags(rawArgs, def.args);
        const config = loadConfig();
        app = buildServices(config, { log: createLogger({ level: 'warn' }), createMasterKey: true });
        const pending = await pendingMigrations(app.db);
        if (pending.length)
          throw new AppError(409, 'migrations_pending', `the database has ${pending.length} pending migration(s); run "svc migrate up" first`);
        await verifyMasterKey(app);
        await def.run({ app, args: args as ParsedArgs<A>, io: io(rawArgs) });
      } catch (error) {
        handleCommandError(error);
      } finally {
        await app?.close();
      }
    },
  });
}

/** Reads a secret from a file, or from standard input when the path is "-". */
export function readSecretFile(pathOrDash: string): string {
  const raw = pathOrDash === '-' ? fs.readFileSync(0, 'utf8') : readFileOrFail(pathOrDash);
  const secret = raw.replace(/\r?\n$/, '');
  if (!secret) throw new UsageError(pathOrDash === '-' ? 'standard input held no password' : `${pathOrDash} holds no password`);
  return secret;
}

function readFileOrFail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

export function parseBooleanFlag(value: unknown, name: string): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value as boolean | undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${name} must be true or false`);
}

export function parseIntFlag(value: string | undefined, name: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be a whole number${min ? ` of at least ${min}` : ''}`);
  return Number(value);
}
