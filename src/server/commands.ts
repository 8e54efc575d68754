import { defineCommand } from 'citty';
import { handleCommandError, parseBooleanFlag, UsageError } from '../cli.js';
import { loadConfig } from '../config.js';
import { buildServices } from '../context.js';
import { checkResult, createMigrator, migrationStatus } from '../db/migrator.js';
import { keepHeapTight } from '../platform/heap.js';
import { createLogger } from '../platform/log.js';
import { startServer } from './serve.js';

export const serveArgs = {
  migrate: { type: 'string', description: 'apply pending migrations before serving (default true); --migrate=false refuses to start while any are pending' },
} as const;

export async function runServe(migrateFlag: unknown): Promise<void> {
  const migrate = parseBooleanFlag(migrateFlag, 'migrate') ?? true;
  keepHeapTight();
  const config = loadConfig();
  const log = createLogger({ level: config.logLevel });
  const app = buildServices(config, { log, createMasterKey: true });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(app, { migrate });
  } catch (error) {
    await app.close().catch(() => {});
    throw error;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    server.close().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error) => {
        log.error('shutdown failed', { error });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'Run the server (the default command)' },
  args: serveArgs,
  async run({ args, rawArgs }) {
    try {
      if (rawArgs.some((a) => a.startsWith('--') && !a.startsWith('--migrate')))
        throw new UsageError(`unknown option ${rawArgs.find((a) => a.startsWith('--') && !a.startsWith('--migrate'))}`);
      await runServe(args.migrate);
    } catch (error) {
      handleCommandError(error);
    }
  },
});

async function withDatabase(fn: (app: ReturnType<typeof buildServices>) => Promise<void>) {
  const config = loadConfig();
  const app = buildServices(config, { log: createLogger({ level: 'warn' }), createMasterKey: true });
  try {
    await fn(app);
  } finally {
    await app.close();
  }
}

export const migrateCommand = defineCommand({
  meta: { name: 'migrate', description: 'Database schema migrations: up, down or status' },
  subCommands: {
    up: defineCommand({
      meta: { name: 'up', description: 'Apply every pending migration' },
      async run() {
        try {
          await withDatabase(async (app) => {
            const applied = checkResult(await createMigrator(app.db).migrateToLatest());
            process.stderr.write(applied.length ? applied.map((n) => `applied ${n}\n`).join('') : 'nothing to apply; the schema is current\n');
          });
        } catch (error) {
          handleCommandError(error);
        }
      },
    }),
    down: defineCommand({
      meta: { name: 'down', description: 'Roll back the latest applied migration (restoring a backup is the safer way back)' },
      async run() {
        try {
          await withDatabase(async (app) => {
            const result = await createMigrator(app.db).migrateDown();
            checkResult(result);
            const undone = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
            process.stderr.write(undone.length ? `rolled back ${undone.join(', ')}\n` : 'nothing to roll back\n');
          });
        } catch (error) {
          handleCommandError(error);
        }
      },
    }),
    status: defineCommand({
      meta: { name: 'status', description: 'List every migration with the time it was applied' },
      async run() {
        try {
          await withDatabase(async (app) => {
            for (const m of await migrationStatus(app.db)) {
              process.stdout.write(`${m.name}\t${m.executedAt ? m.executedAt.toISOString() : 'pending'}\n`);
            }
          });
        } catch (error) {
          handleCommandError(error);
        }
      },
    }),
  },
});
