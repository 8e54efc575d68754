// bench/ingest: messages per second accepted over SMTP by the server's ingress (each one parsed,
// stored and committed before the 250), next to two floors measured in the same run with the same
// client: a bare smtp-server that only consumes the stream (`ratio`), and one that does the same
// work the least costly way — mailparser, the raw bytes in an fsynced file and one row in SQLite,
// group-committed with the WAL flushed before each 250 (`durable_ratio`; bench/smtp-floor-server.ts).
// `cpu_ms_per_mail` is svc's CPU per mail (all its threads, from /proc: load-insensitive). 5 KB messages with one small attachment, 5
// connections, 2,000 messages. Durability is on, as in production: each 250 waits until the .eml,
// its directory and the commit (the SQLite WAL) are flushed to disk. Also the server's RSS after
// the warm-up (start), halfway (middle) and at the end: flat is the goal. And the CPU per message
// of each server and of the client: cpu_bound_ratio is the ratio the machine's cores would allow
// if nothing ever waited (the client and the server share the cores).
// Run: npm run build && node dist/bench/ingest.js [count] [--cpu-prof <dir>] [--warmup <n>]  (the profile is the server's)
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { BENCH_ADDRESS, benchMail, startIngestServer } from './ingest-scene.js';
import { cpuSeconds, figure, rssMb, threadCpuSeconds, threadFigures } from './lib.js';

const args = process.argv.slice(2);
const profIndex = args.indexOf('--cpu-prof');
const CPU_PROF_DIR = profIndex === -1 ? undefined : path.resolve(args.splice(profIndex, 2)[1] ?? 'bench-prof');
const warmupIndex = args.indexOf('--warmup');
// Both servers first take this many (not counted): the figures are for a warmed-up process. V8 is
// still optimizing svc's functions (TurboFan on its helper threads) for thousands of mails after
// the default 500; `--warmup 5000` measures closer to a long-running server.
const WARMUP = warmupIndex === -1 ? 500 : Number(args.splice(warmupIndex, 2)[1]);
const COUNT = Math.min(Number(args[0] ?? 2000), 20_000);
const CONNECTIONS = 5;
const TIME_LIMIT_MS = 180_000;

/** Sends `count` messages over a pool of CONNECTIONS connections; returns messages per second. */
async function blast(port: number, to: string, count: number, onProgress?: (done: number) => void): Promise<{ rate: number; clientCpuMs: number }> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
  });
  const messages = Array.from({ length: count }, (_, i) => benchMail(i, to));
  const started = process.hrtime.bigint();
  const clientCpuBefore = process.cpuUsage();
  let done = 0;
  const deadline = setTimeout(() => {
    throw new Error(`bench did not finish within ${TIME_LIMIT_MS / 1000} s`);
  }, TIME_LIMIT_MS);
  try {
    await Promise.all(
      messages.map(async (m) => {
        const info = await transport.sendMail({ raw: m.raw, envelope: m.envelope });
        if (!/^250/.test(info.response)) throw new Error(`unexpected answer ${info.response}`);
        done++;
        onProgress?.(done);
      }),
    );
  } finally {
    clearTimeout(deadline);
    transport.close();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const clientCpu = process.cpuUsage(clientCpuBefore);
  return { rate: count / seconds, clientCpuMs: (clientCpu.user + clientCpu.system) / 1000 / count };
}

async function startFloor(args: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.resolve('dist/bench/smtp-floor-server.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return { child, port };
}

/** A floor's rate and CPU per mail (its own and the client's), after the warm-up. */
async function measureFloor(args: string[]): Promise<{ rate: number; cpuMs: number; clientCpuMs: number }> {
  const floor = await startFloor(args);
  try {
    await blast(floor.port, BENCH_ADDRESS, WARMUP);
    const cpuBefore = cpuSeconds(floor.child.pid!);
    const { rate, clientCpuMs } = await blast(floor.port, BENCH_ADDRESS, COUNT);
    return { rate, clientCpuMs, cpuMs: ((cpuSeconds(floor.child.pid!) - cpuBefore) * 1000) / COUNT };
  } finally {
    floor.child.kill('SIGTERM');
  }
}

async function main() {
  // Floors: the bare smtp-server, then the durable one; same client, same messages.
  const { rate: floorRate, cpuMs: floorCpuMs, clientCpuMs: floorClientCpuMs } = await measureFloor([]);
  const durableDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-bench-floor-'));
  let durable: Awaited<ReturnType<typeof measureFloor>>;
  try {
    durable = await measureFloor(['--durable', durableDir]);
  } finally {
    await fs.rm(durableDir, { recursive: true, force: true });
  }

  const ingest = await startIngestServer(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []);
  try {
    const { server, port } = ingest;
    const pid = server.child.pid!;
    await blast(port, BENCH_ADDRESS, WARMUP);
    const start = rssMb(pid);
    let middle = 0;
    const cpuBefore = cpuSeconds(pid);
    const threadsBefore = threadCpuSeconds(pid);
    const blastStarted = performance.now();
    const { rate, clientCpuMs } = await blast(port, BENCH_ADDRESS, COUNT, (done) => {
      if (done === Math.floor(COUNT / 2)) middle = rssMb(pid);
    });
    const wallSeconds = (performance.now() - blastStarted) / 1000;
    const threadsAfter = threadCpuSeconds(pid);
    const end = rssMb(pid);
    const cpuMs = ((cpuSeconds(pid) - cpuBefore) * 1000) / COUNT;
    const errors = server.stderrLines.filter((l) => l.includes('"level":"error"'));
    if (errors.length) throw new Error(`server logged errors:\n${errors.slice(0, 5).join('\n')}`);

    figure('floor_smtp_msgs_per_s', floorRate, 'msg/s');
    figure('ingest_smtp_msgs_per_s', rate, 'msg/s');
    figure('durability', 'on (.eml, its directory and the commit flushed before each 250)');
    figure('ratio', rate / floorRate);
    figure('durable_floor_msgs_per_s', durable.rate, 'msg/s');
    figure('durable_ratio', rate / durable.rate);
    figure('cpu_ms_per_mail', cpuMs);
    figure('durable_floor_cpu_ms_per_mail', durable.cpuMs);
    figure('floor_server_cpu_per_msg', floorCpuMs, 'ms');
    figure('floor_client_cpu_per_msg', floorClientCpuMs, 'ms');
    figure('server_cpu_per_msg', cpuMs, 'ms');
    figure('client_cpu_per_msg', clientCpuMs, 'ms');
    // What the machine's cores allow whatever the waits: the client and the server share them.
    const cores = os.availableParallelism();
    figure('cpu_bound_ratio', (cores * 1000) / (clientCpuMs + cpuMs) / floorRate);
    const threads = threadFigures('server', pid, threadsBefore, threadsAfter, wallSeconds, { count: COUNT, unit: 'msg' });
    // The most durable_ratio could be with every wait gone: the cores shared with the client, and
    // svc's event loop (its main thread's CPU per mail, at 100 % busy).
    figure('durable_cpu_bound_ratio', (cores * 1000) / (clientCpuMs + cpuMs) / durable.rate);
    figure('durable_main_bound_ratio', COUNT / threads.main / durable.rate);
    figure('server_rss_start', start, 'MB');
    figure('server_rss_middle', middle, 'MB');
    figure('server_rss_end', end, 'MB');
  } finally {
    await ingest.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
