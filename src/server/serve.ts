// Starting and stopping the whole server: migrations, HTTP, metrics, background parts and jobs.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { featureWarnings } from '../config.js';
import { type App, verifyMasterKey } from '../context.js';
import { checkResult, createMigrator, pendingMigrations } from '../db/migrator.js';
import { API_SERVER_OPTIONS } from '../http/response.js';
import { releaseYoungGeneration } from '../platform/heap.js';
import { startMetricsServer } from '../platform/metrics.js';
import { readVersion } from '../version.js';
import { backgroundTable, type RunningPart } from './background.js';
import { createServerApp } from './routes.js';

export class StartupError extends Error {}

export interface RunningServer {
  httpPort: number;
  metricsPort: number | null;
  parts: Record<string, RunningPart>;
  /** Stops accepting, lets in-flight requests finish (bounded), stops background work, closes the database. */
  close(): Promise<void>;
}

export async function applyMigrations(app: App, migrate: boolean): Promise<void> {
  if (migrate) {
    const applied = checkResult(await createMigrator(app.db).migrateToLatest());
    for (const name of applied) app.log.info('migration applied', { migration: name });
    return;
  }
  const pending = await pendingMigrations(app.db);
  if (pending.length) {
    throw new StartupError(
      `${pending.length} database migration(s) are pending (${pending.join(', ')}); run "svc migrate up" first, or start without --migrate=false`,
    );
  }
}

export async function startServer(app: App, opts: { migrate?: boolean } = {}): Promise<RunningServer> {
  const { config, log } = app;
  await applyMigrations(app, opts.migrate ?? true);
  await verifyMasterKey(app);
  for (const warning of featureWarnings(config)) log.warn(warning);

  for (const part of backgroundTable) for (const kind of part.jobs?.(app) ?? []) app.jobs.register(kind);
  const parts: Record<string, RunningPart> = {};
  for (const part of backgroundTable) {
    const running = await part.start?.(app);
    if (running) parts[part.name] = running;
  }

  const api = createServerApp(app);
  const wss = new WebSocketServer({ noServer: true });
  const http = createAdaptorServer({ fetch: api.fetch, websocket: { server: wss }, serverOptions: API_SERVER_OPTIONS }) as Server;
  http.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(config.httpAddr.port, config.httpAddr.host, () => resolve());
  });
  app.jobs.observe(app.metrics);
  const metrics = config.metricsAddr ? await startMetricsServer(app.metrics, config.metricsAddr) : null;

  await app.jobs.schedulePeriodic();
  app.jobs.start();

  const httpPort = (http.address() as AddressInfo).port;
  const metricsPort = metrics ? (metrics.address() as AddressInfo).port : null;
  const extra = Object.assign({}, ...Object.values(parts).map((p) => p.info ?? {}));
  log.info('listening', {
    version: readVersion(),
    http: `${config.httpAddr.host}:${httpPort}`,
    metrics: metricsPort ? `${config.metricsAddr!.host}:${metricsPort}` : null,
    database: app.dialect,
    ...extra,
  });
  releaseYoungGeneration();

  let closing: Promise<void> | undefined;
  return {
    httpPort,
    metricsPort,
    parts,
    close() {
      closing ??= (async () => {
        const drained = new Promise<void>((resolve) => http.close(() => resolve()));
        // Keep-alive connections are closed as soon as their in-flight request is answered.
        const sweeper = setInterval(() => http.closeIdleConnections(), 50);
        http.closeIdleConnections();
        for (const client of wss.clients) client.close(1001, 'server shutting down');
        const timer = setTimeout(() => http.closeAllConnections(), config.shutdownTimeoutMs);
        await drained;
        clearTimeout(timer);
        clearInterval(sweeper);
        await new Promise<void>((resolve) => (metrics ? metrics.close(() => resolve()) : resolve()));
        for (const part of Object.values(parts)) await part.stop();
        await app.close();
      })();
      return closing;
    },
  };
}
