// bench/ingest: messages per second accepted over SMTP by the server's ingress (each one parsed,
// stored and committed before the 250), next to a bare smtp-server that only consumes the stream,
// measured in the same run with the same client. 5 KB messages with one small attachment, 5
// connections, 2,000 messages. Durability is on, as in production: each 250 waits until the .eml,
// its directory and the commit (the SQLite WAL) are flushed to disk. Also the server's RSS after
// the warm-up (start), halfway (middle) and at the end: flat is the goal.
// Run: npm run build && node dist/bench/ingest.js [count] [--cpu-prof <dir>]  (the profile is the server's)
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { runSvc, spawnServer, testEnv } from '../test/helpers/server.js';
import { cpuSeconds, figure, rssMb, threadCpuSeconds, threadFigures } from './lib.js';

const args = process.argv.slice(2);
const profIndex = args.indexOf('--cpu-prof');
const CPU_PROF_DIR = profIndex === -1 ? undefined : path.resolve(args.splice(profIndex, 2)[1] ?? 'bench-prof');
const COUNT = Math.min(Number(args[0] ?? 2000), 20_000);
// Both servers first take this many (not counted): the figures are for a warmed-up process.
const WARMUP = 500;
const CONNECTIONS = 5;
const TIME_LIMIT_MS = 180_000;

function message(i: number, to: string): { raw: Buffer; envelope: { from: string; to: string[] } } {
  const sender = `customer${i % 250}@bench.example`;
  const text = `Hello,\r\n\r\n${'I have a question about my order and the delivery date. '.repeat(60)}\r\n\r\nThanks, customer ${i}\r\n`;
  const attachment = randomBytes(600).toString('base64').replace(/.{76}/g, '$&\r\n');
  const raw = [
    `From: Customer ${i % 250} <${sender}>`,
    `To: ${to}`,
    `Subject: Order question ${i}`,
    `Message-ID: <bench-${i}-${randomBytes(6).toString('hex')}@bench.example>`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="bench-boundary"',
    '',
    '--bench-boundary',
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '--bench-boundary',
    'Content-Type: application/octet-stream',
    'Content-Disposition: attachment; filename="receipt.bin"',
    'Content-Transfer-Encoding: base64',
    '',
    attachment,
    '--bench-boundary--',
    '',
  ].join('\r\n');
  return { raw: Buffer.from(raw), envelope: { from: sender, to: [to] } };
}

/** Sends `count` messages over a pool of CONNECTIONS connections; returns messages per second. */
async function blast(port: number, to: string, count: number, onProgress?: (done: number) => void): Promise<number> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
  });
  const messages = Array.from({ length: count }, (_, i) => message(i, to));
  const started = process.hrtime.bigint();
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
  return count / seconds;
}

async function startFloor(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.resolve('dist/bench/smtp-floor-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  return { child, port };
}

async function main() {
  // Floor: the bare smtp-server, same client, same messages.
  const floor = await startFloor();
  await blast(floor.port, 'support@bench.example', WARMUP);
  const floorRate = await blast(floor.port, 'support@bench.example', COUNT);
  floor.child.kill('SIGTERM');

  const te = await testEnv({ SVC_INGRESS_SECRET: 'bench-secret', SVC_METRICS_ADDR: 'off' });
  const env = te.env;
  let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
  try {
    const migrated = await runSvc(['migrate', 'up'], { env });
    if (migrated.code !== 0) throw new Error(migrated.stderr);
    const ws = await runSvc(['bootstrap', '--email', 'owner@bench.example', '--workspace', 'Bench'], { env });
    if (ws.code !== 0) throw new Error(ws.stderr);
    const inbox = await runSvc(['inbox', 'create', '--workspace', 'Bench', '--name', 'Support'], { env });
    if (inbox.code !== 0) throw new Error(inbox.stderr);
    const channel = await runSvc(
      ['channel', 'create-email', '--workspace', 'Bench', '--inbox', inbox.stdout.trim(), '--name', 'Mail', '--address', 'support@bench.example'],
      { env },
    );
    if (channel.code !== 0) throw new Error(channel.stderr);

    server = await spawnServer(env, ['serve'], CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []);
    const listening = JSON.parse(server.stderrLines.find((l) => l.includes('"msg":"listening"'))!) as { smtp: string };
    const port = Number(listening.smtp.slice(listening.smtp.lastIndexOf(':') + 1));
    const pid = server.child.pid!;
    // The server writes a log line per mail; keep only the count so the pipe never backs up.
    server.stderrLines.length = 0;
    server.child.stderr!.on('data', () => {
      if (server!.stderrLines.length > 1000) server!.stderrLines.splice(0, server!.stderrLines.length - 100);
    });

    await blast(port, 'support@bench.example', WARMUP);
    const start = rssMb(pid);
    let middle = 0;
    const cpuBefore = cpuSeconds(pid);
    const threadsBefore = threadCpuSeconds(pid);
    const blastStarted = performance.now();
    const rate = await blast(port, 'support@bench.example', COUNT, (done) => {
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
    figure('server_cpu_per_msg', cpuMs, 'ms');
    threadFigures('server', pid, threadsBefore, threadsAfter, wallSeconds, { count: COUNT, unit: 'msg' });
    figure('server_rss_start', start, 'MB');
    figure('server_rss_middle', middle, 'MB');
    figure('server_rss_end', end, 'MB');
  } finally {
    await server?.kill('SIGTERM');
    await te.cleanup();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
