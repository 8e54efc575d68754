// Shared pieces of the benchmarks: a real `svc serve` child process and figure printing.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAIN, runSvc, type TestEnv, testEnv } from '../test/helpers/server.js';

export function figure(name: string, value: number | string, unit = ''): void {
  process.stdout.write(`${name}: ${typeof value === 'number' ? Number(value.toFixed(2)) : value}${unit ? ' ' + unit : ''}\n`);
}

export interface BenchServer {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn until the "listening" line. */
  startMs: number;
  /** The SMTP ingress port, when the server runs one (SVC_INGRESS_SECRET). */
  smtpPort: number | null;
  rssMb(): number;
  stop(): Promise<void>;
}

/** Starts `svc serve`; its stderr is scanned for the listening line, then drained without keeping it. */
export function startBenchServer(env: Record<string, string>): Promise<BenchServer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'serve'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let buf = '';
    let started = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      if (started) return;
      buf += chunk.toString();
      const line = buf.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (!line) return;
      started = true;
      buf = '';
      const info = JSON.parse(line) as { http: string; smtp?: string };
      resolve({
        child,
        url: `http://${info.http}`,
        smtpPort: info.smtp ? Number(info.smtp.slice(info.smtp.lastIndexOf(':') + 1)) : null,
        startMs: performance.now() - t0,
        rssMb: () => rssMb(child.pid!),
        stop: () =>
          new Promise((r) => {
            child.once('exit', () => r());
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => {
      if (!started) reject(new Error(`server exited with ${code}: ${buf}`));
    });
  });
}

export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** A migrated data dir with one workspace and a full-scope API key. */
export async function seededEnv(extra: Record<string, string> = {}): Promise<{ te: TestEnv; apiKey: string }> {
  const te = await testEnv({ SVC_LOG_LEVEL: 'info', ...extra });
  await runSvc(['migrate', 'up'], { env: te.env });
  await runSvc(['bootstrap', '--email', 'bench@example.com', '--workspace', 'Bench'], { env: te.env });
  await runSvc(['inbox', 'create', '--workspace', 'Bench', '--name', 'Support'], { env: te.env });
  const apiKey = (await runSvc(['api-key', 'create', '--workspace', 'Bench', '--name', 'bench'], { env: te.env })).stdout.trim();
  return { te, apiKey };
}

export const benchDir = path.dirname(new URL(import.meta.url).pathname);
