// Shared pieces of the benchmarks: a real `svc serve` child process and figure printing.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAIN, runSvc, type TestEnv, testEnv } from '../test/helpers/server.js';

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

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

/**
 * The environment a bench server adds: BENCH_NODE_OPTIONS, when set, becomes its NODE_OPTIONS (to
 * profile it: `--require <a preload that starts the inspector's profiler>`; `--cpu-prof` is refused there).
 */
export function benchServerEnv(): Record<string, string> {
  return process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {};
}

/** Starts `svc serve`; its stderr is scanned for the listening line, then drained without keeping it. */
export function startBenchServer(env: Record<string, string>): Promise<BenchServer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { PATH: process.env.PATH ?? '', ...env, ...benchServerEnv() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
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

/** CPU seconds (user + system, every thread) a process has used so far (clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of each thread of a process, by thread id. */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const byThread = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      byThread.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return byThread;
}

/**
 * Per-thread CPU of a phase (`<prefix>_cpu_main_s` …) and its share of the phase's wall time
 * (`<prefix>_busy_main` …): the main thread, the busiest other thread (the parse worker, when it is
 * busy) and the rest (V8's GC and compiler helpers, libuv's pool) together. `per` divides the CPU
 * figures by a count of work (printed in ms per item) instead of printing seconds.
 */
export function threadFigures(
  prefix: string,
  pid: number,
  before: Map<number, number>,
  after: Map<number, number>,
  wallSeconds: number,
  per?: { count: number; unit: string },
): { main: number; busiest: number; rest: number } {
  const used = [...after].map(([tid, cpu]) => ({ tid, cpu: cpu - (before.get(tid) ?? 0) }));
  const main = used.find((t) => t.tid === pid)?.cpu ?? 0;
  const others = used.filter((t) => t.tid !== pid).sort((a, b) => b.cpu - a.cpu);
  const busiest = others[0]?.cpu ?? 0;
  const rest = others.slice(1).reduce((s, t) => s + t.cpu, 0);
  // Every thread on stderr (id less the process id: V8's helpers start first, then libuv's pool, then workers).
  process.stderr.write(
    `threads ${prefix}: ${used
      .filter((t) => t.cpu > 0)
      .map((t) => `${t.tid - pid}=${t.cpu.toFixed(2)}`)
      .join(' ')}\n`,
  );
  for (const [name, cpu] of [
    ['main', main],
    ['busiest_other', busiest],
    ['rest', rest],
  ] as const) {
    if (per) figure(`${prefix}_cpu_${name}_per_${per.unit}`, (cpu * 1000) / per.count, 'ms');
    else figure(`${prefix}_cpu_${name}_s`, cpu, 's');
    figure(`${prefix}_busy_${name}`, wallSeconds > 0 ? cpu / wallSeconds : 0);
  }
  return { main, busiest, rest };
}

/**
 * CPU seconds of the local Postgres server's processes: `backends` serve connections to `database`,
 * `shared` are the server's own processes (WAL writer, checkpointer…) that other databases use too.
 * Zero when Postgres runs elsewhere (its processes are not in /proc).
 */
export function postgresCpuSeconds(database: string): { backends: number; shared: number } {
  const out = { backends: 0, shared: 0 };
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmd.startsWith('postgres:')) continue;
      const fields = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / 100;
      if (cmd.includes(` ${database} `)) out.backends += cpu;
      else if (!/ \d+\.\d+\.\d+\.\d+\(\d+\)| \[local\]/.test(cmd)) out.shared += cpu;
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}
