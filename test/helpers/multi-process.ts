// What the tests of several `svc serve` processes on one database (test/multi-process/two-servers,
// mailbox-migration, retention) share: why they skip on SQLite, a JSON request to any server, the
// test's own connection to the database (as a command beside the servers would have), and the stop.
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { postgresUrl } from './db.js';
import type { ChildServer, TestEnv } from './server.js';

export const skipWithoutPostgres: string | false = postgresUrl
  ? false
  : 'several servers share one Postgres database (SVC_TEST_DATABASE_URL); on SQLite one server runs, with commands beside it';

export async function json(url: string, init: { method?: string; token?: string; body?: unknown; origin?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.origin) headers.origin = init.origin;
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** The services on the test environment's database, logging only errors (and those nowhere). */
export function quietApp(env: Record<string, string>): App {
  return buildServices(loadConfig(env), { log: createLogger({ level: 'error', write: () => {} }) });
}

/** Kills the servers still running, closes the test's services and removes the environment. */
export async function stopAll(servers: ChildServer[], app: App | undefined, te: TestEnv | undefined): Promise<void> {
  for (const s of servers) if (s.child.exitCode === null) await s.kill('SIGKILL');
  await app?.close();
  await te?.cleanup();
}
