// Boots the real server for tests: random ports on 127.0.0.1, a temp data dir, a fresh database.
// In-process (startTestServer: a movable clock, direct access to services) or as a child process
// (spawnServer / runSvc: the real binary, for commands, signals and kill -9).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { type App, type BuildOptions, buildServices } from '../../src/context.js';
import { type Clock, ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { type RunningServer, startServer } from '../../src/server/serve.js';
import { createTestDatabase } from './db.js';

export const MAIN = path.resolve('dist/src/main.js');

export function tempDir(prefix = 'svc-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface TestEnv {
  env: Record<string, string>;
  dataDir: string;
  cleanup(): Promise<void>;
}

/** Settings for a server or command under test: its own data dir, database and master key. */
export async function testEnv(extra: Record<string, string> = {}): Promise<TestEnv> {
  const dataDir = tempDir();
  const db = await createTestDatabase();
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_ADDR: '127.0.0.1:0',
    SVC_METRICS_ADDR: '127.0.0.1:0',
    SVC_SMTP_ADDR: '127.0.0.1:0',
    SVC_MASTER_KEY: randomBytes(32).toString('base64'),
    SVC_LOG_LEVEL: 'info',
    ...(db.url ? { SVC_DATABASE_URL: db.url } : {}),
    ...extra,
  };
  return {
    env,
    dataDir,
    async cleanup() {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface TestServer {
  app: App;
  server: RunningServer;
  url: string;
  metricsUrl: string;
  clock: ManualClock | Clock;
  env: Record<string, string>;
  logs: LogLine[];
  rawLogs: string[];
  /** JSON request helper: returns status, parsed body and headers. */
  request(
    method: string,
    urlPath: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string | Buffer },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/** The real server in this process. Pass `clock: new ManualClock(...)` to move time by hand. */
export async function startTestServer(
  opts: { env?: Record<string, string>; clock?: Clock; migrate?: boolean; testEnv?: TestEnv; durable?: BuildOptions['durable'] } = {},
): Promise<TestServer> {
  const te = opts.testEnv ?? (await testEnv(opts.env));
  const config = loadConfig({ ...te.env, ...(opts.env ?? {}) });
  const logs: LogLine[] = [];
  const rawLogs: string[] = [];
  const log = createLogger({
    level: 'debug',
    write: (line) => {
      rawLogs.push(line);
      logs.push(JSON.parse(line));
    },
  });
  const clock = opts.clock ?? new ManualClock();
  const app = buildServices(config, { log, clock, createMasterKey: true, jobPollMs: 50, durable: opts.durable });
  const server = await startServer(app, { migrate: opts.migrate ?? true });
  const url = `http://127.0.0.1:${server.httpPort}`;
  return {
    app,
    server,
    url,
    metricsUrl: `http://127.0.0.1:${server.metricsPort}/metrics`,
    clock,
    env: te.env,
    logs,
    rawLogs,
    async request(method, urlPath, r = {}) {
      const headers: Record<string, string> = { ...(r.headers ?? {}) };
      if (r.token) headers.authorization = `Bearer ${r.token}`;
      let body: string | Buffer | undefined;
      if (r.raw !== undefined) body = r.raw;
      else if (r.body !== undefined) {
        body = JSON.stringify(r.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + urlPath, { method, headers, body: body as BodyInit | undefined });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed as any, headers: res.headers };
    },
    async stop() {
      await server.close();
      if (!opts.testEnv) await te.cleanup();
    },
  };
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc <args>` as a process with the given settings. */
export function runSvc(args: string[], opts: { env: Record<string, string>; input?: string | Buffer; timeoutMs?: number }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export interface ChildServer {
  child: ChildProcess;
  url: string;
  metricsUrl: string | null;
  stderrLines: string[];
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `svc serve` as a child process and waits for its "listening" line. */
export function spawnServer(env: Record<string, string>, args: string[] = ['serve'], nodeArgs: string[] = []): Promise<ChildServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const stderrLines: string[] = [];
    let buffered = '';
    let started = false;
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${stderrLines.join('\n')}`));
    }, 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        stderrLines.push(line);
        if (!started && line.includes('"msg":"listening"')) {
          started = true;
          clearTimeout(timer);
          const info = JSON.parse(line) as { http: string; metrics: string | null };
          resolve({
            child,
            url: `http://${info.http}`,
            metricsUrl: info.metrics ? `http://${info.metrics}/metrics` : null,
            stderrLines,
            exited,
            kill: (signal = 'SIGTERM') => {
              child.kill(signal);
              return exited;
            },
          });
        }
      }
    });
    exited.then((code) => {
      if (!started) {
        clearTimeout(timer);
        reject(
          Object.assign(new Error(`server exited with ${code} before listening:\n${stderrLines.join('\n')}${buffered}`), {
            code,
            stderr: stderrLines.join('\n') + buffered,
          }),
        );
      }
    });
  });
}
