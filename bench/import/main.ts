// bench/import: a generated mailbox (threads in both directions, some attachments) in a local
// Dovecot, copied by our migration (headers scan + copy, through the API of a real `svc serve`)
// and, in the same run, by mbsync (Debian isync, Sync Pull) into a local Maildir: messages per
// second of both, their ratio, the server's peak RSS during the copy, and the CPU Dovecot spent on each.
// Run: npm run build && node dist/bench/import/main.js [--messages 10000]   (at most 100,000; a bare
// number works too). --no-mbsync leaves the peer out (the long run: time and peak RSS only).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startDovecot } from '../../test/helpers/dovecot.js';
import { fillBulkMailbox } from '../../test/helpers/migration.js';
import { runSvc, tempDir, testEnv } from '../../test/helpers/server.js';
import { cpuSeconds, figure, startBenchServer, threadCpuSeconds, threadFigures } from '../lib.js';

function messagesArgument(args: string[]): number {
  const flag = args.indexOf('--messages');
  const value = flag === -1 ? args.find((a) => /^\d+$/.test(a)) : args[flag + 1];
  const n = Number(value ?? 10_000);
  if (!Number.isInteger(n) || n < 100 || n > 100_000) throw new Error('--messages takes a whole number from 100 to 100,000');
  return n;
}

const MESSAGES = messagesArgument(process.argv.slice(2));
const WITH_MBSYNC = !process.argv.includes('--no-mbsync');
const TIME_LIMIT_MS = 45 * 60_000;
const USER = 'support@bench.test';
const PASSWORD = 'bench-app-password';
const run = promisify(execFile);

/**
 * CPU seconds used by Dovecot's imap processes (one per connection; every imap process on the
 * machine, so run the bench on a machine without another Dovecot at work). Sampled every 100 ms and
 * kept per process as last read, so a session that logs out keeps what it used up to its last sample.
 */
function dovecotCpuSampler(): { total(): number; stop(): void } {
  const used = new Map<number, number>();
  const sample = () => {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (fs.readFileSync(`/proc/${name}/comm`, 'utf8').trim() === 'imap') used.set(Number(name), cpuSeconds(Number(name)));
      } catch {
        // the process ended meanwhile
      }
    }
  };
  const timer = setInterval(sample, 100);
  return {
    total: () => {
      sample();
      return [...used.values()].reduce((a, b) => a + b, 0);
    },
    stop: () => clearInterval(timer),
  };
}

async function main() {
  const deadline = Date.now() + TIME_LIMIT_MS;
  const dovecot = await startDovecot();
  const dovecotCpu = dovecotCpuSampler();
  const work = tempDir('svc-bench-import-');
  const te = await testEnv({
    SVC_MIGRATION_ALLOW_PRIVATE: '1',
    SVC_METRICS_ADDR: 'off',
  });
  let server: Awaited<ReturnType<typeof startBenchServer>> | undefined;
  try {
    dovecot.addUser(USER, PASSWORD);
    const t0 = performance.now();
    const made = await fillBulkMailbox(dovecot, USER, {
      threads: MESSAGES / 2,
      perThread: 2,
      now: new Date(),
      attachmentEvery: 10,
      attachmentBytes: MESSAGES > 20_000 ? 8_000 : 20_000,
      customers: 2_000,
    });
    figure('mailbox_messages', made.messages, 'messages');
    figure('mailbox_generated_s', (performance.now() - t0) / 1000, 's');

    // Dovecot indexes the new files once, before either copy reads them.
    dovecot.doveadm(['mailbox', 'status', '-u', USER, 'messages', '*']);

    // Peer: mbsync pulls the same folders into a local Maildir (its defaults, FSync included).
    const conf = path.join(work, 'mbsyncrc');
    fs.writeFileSync(
      conf,
      [
        'IMAPAccount old',
        'Host 127.0.0.1',
        `Port ${dovecot.port}`,
        `User ${USER}`,
        `Pass ${PASSWORD}`,
        'SSLType None',
        'AuthMechs LOGIN',
        '',
        'IMAPStore old-remote',
        'Account old',
        '',
        'MaildirStore local',
        `Path ${path.join(work, 'maildir')}/`,
        `Inbox ${path.join(work, 'maildir', 'INBOX')}`,
        '',
        'Channel pull',
        'Far :old-remote:',
        'Near :local:',
        'Patterns INBOX Sent',
        'Sync Pull',
        'Create Near',
        `SyncState ${path.join(work, 'state')}/`,
        '',
      ].join('\n'),
    );
    fs.mkdirSync(path.join(work, 'state'));
    fs.mkdirSync(path.join(work, 'maildir'));
    let mbsyncSeconds = 0;
    let mbsyncDovecotCpu = 0;
    if (WITH_MBSYNC) {
      const m0 = performance.now();
      const dovecotBefore = dovecotCpu.total();
      await run('mbsync', ['-q', '-c', conf, 'pull'], { timeout: TIME_LIMIT_MS, maxBuffer: 1 << 20 });
      mbsyncSeconds = (performance.now() - m0) / 1000;
      mbsyncDovecotCpu = dovecotCpu.total() - dovecotBefore;
      const pulled = ['INBOX', 'Sent'].reduce(
        (n, f) => n + fs.readdirSync(path.join(work, 'maildir', f, 'cur')).length + fs.readdirSync(path.join(work, 'maildir', f, 'new')).length,
        0,
      );
      if (pulled !== made.messages) throw new Error(`mbsync copied ${pulled} of ${made.messages}`);
      fs.rmSync(path.join(work, 'maildir'), { recursive: true, force: true });
    }
    const mbsyncCommands = dovecot.rawlogCommands(USER).length;

    // svc: a real server, driven through the API.
    const env = te.env;
    for (const args of [
      ['migrate', 'up'],
      ['bootstrap', '--email', 'owner@bench.test', '--workspace', 'Bench'],
    ]) {
      const r = await runSvc(args, { env });
      if (r.code !== 0) throw new Error(r.stderr);
    }
    const inbox = (await runSvc(['inbox', 'create', '--workspace', 'Bench', '--name', 'Support'], { env })).stdout.trim();
    const channel = await runSvc(['channel', 'create-email', '--workspace', 'Bench', '--inbox', inbox, '--name', 'Mail', '--address', USER], { env });
    if (channel.code !== 0) throw new Error(channel.stderr);
    const key = (await runSvc(['api-key', 'create', '--workspace', 'Bench', '--name', 'bench'], { env })).stdout.trim();
    server = await startBenchServer(env);
    figure('server_rss_start', server.rssMb(), 'MB');
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(server!.url + p, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as any;
      if (res.status >= 400) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const m = await api('POST', '/v1/migrations', {
      provider: 'imap',
      source_address: USER,
      imap: { host: '127.0.0.1', port: dovecot.port, tls: 'none' },
      inbox_id: inbox,
    });
    await api('PUT', `/v1/migrations/${m.id}/credentials`, { password: PASSWORD });
    const tested = await api('POST', `/v1/migrations/${m.id}/test`);
    if (!tested.ok) throw new Error(tested.message);
    let peak = server.rssMb();
    const waitFor = async (state: string) => {
      for (;;) {
        peak = Math.max(peak, server!.rssMb());
        const cur = await api('GET', `/v1/migrations/${m.id}`);
        if (cur.state === state) return cur;
        if (cur.state === 'needs_attention') throw new Error(JSON.stringify(cur.attention));
        if (Date.now() > deadline)
          throw new Error(`the bench did not finish within ${TIME_LIMIT_MS / 60_000} minutes (state ${cur.state}, ${JSON.stringify(cur.progress)})`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const s0 = performance.now();
    const dovecot0 = dovecotCpu.total();
    const scanCpu0 = cpuSeconds(server.child.pid!);
    const threads0 = threadCpuSeconds(server.child.pid!);
    // Phase bounds on the monotonic clock, to cut a server's --cpu-prof profile by phase.
    const phaseMark = (name: string) => process.stderr.write(`phase ${name} ${process.hrtime.bigint() / 1000n}\n`);
    phaseMark('scan');
    await api('POST', `/v1/migrations/${m.id}/scan`);
    const ready = await waitFor('ready');
    const scanSeconds = (performance.now() - s0) / 1000;
    const scanCpu = cpuSeconds(server.child.pid!) - scanCpu0;
    const scanPeak = peak;
    const threads1 = threadCpuSeconds(server.child.pid!);
    const dovecot1 = dovecotCpu.total();
    phaseMark('copy');
    peak = server.rssMb();
    if (ready.plan.summary.total !== made.messages) throw new Error(`scan found ${ready.plan.summary.total} of ${made.messages}`);
    const c0 = performance.now();
    await api('POST', `/v1/migrations/${m.id}/start`);
    const done = await waitFor('syncing');
    const copySeconds = (performance.now() - c0) / 1000;
    const copyCpu = cpuSeconds(server.child.pid!) - scanCpu0 - scanCpu;
    const threads2 = threadCpuSeconds(server.child.pid!);
    const dovecot2 = dovecotCpu.total();
    phaseMark('end');
    if (done.progress.copied !== made.messages) throw new Error(`copied ${done.progress.copied} of ${made.messages}: ${JSON.stringify(done.progress)}`);

    const importRate = made.messages / (scanSeconds + copySeconds);
    figure('import_msgs_per_s', importRate, 'msg/s');
    figure('import_s', scanSeconds + copySeconds, 's');
    figure('import_imap_commands', dovecot.rawlogCommands(USER).length - mbsyncCommands, 'commands');
    if (WITH_MBSYNC) {
      const mbsyncRate = made.messages / mbsyncSeconds;
      figure('mbsync_msgs_per_s', mbsyncRate, 'msg/s');
      figure('mbsync_s', mbsyncSeconds, 's');
      figure('mbsync_imap_commands', mbsyncCommands, 'commands');
      figure('mbsync_dovecot_cpu_s', mbsyncDovecotCpu, 's');
      figure('ratio', importRate / mbsyncRate);
      // The most the ratio could be with every wait gone: svc's and Dovecot's CPU for the import
      // spread over all the machine's cores.
      const importCpu = scanCpu + copyCpu + (dovecot2 - dovecot0);
      figure('cpu_bound_ratio', mbsyncSeconds / (importCpu / os.availableParallelism()));
    }
    figure('import_scan_s', scanSeconds, 's');
    figure('import_copy_msgs_per_s', made.messages / copySeconds, 'msg/s');
    // The server's own CPU per phase: steadier than the times on a shared machine.
    figure('import_scan_server_cpu_s', scanCpu, 's');
    figure('import_copy_server_cpu_s', copyCpu, 's');
    // The old mailbox's server works too: a command pattern that makes it resync a folder shows here.
    figure('import_scan_dovecot_cpu_s', dovecot1 - dovecot0, 's');
    figure('import_copy_dovecot_cpu_s', dovecot2 - dovecot1, 's');
    threadFigures('import_scan', server.child.pid!, threads0, threads1, scanSeconds);
    threadFigures('import_copy', server.child.pid!, threads1, threads2, copySeconds);
    figure('server_peak_rss_scan', scanPeak, 'MB');
    figure('server_peak_rss_copy', peak, 'MB');
    figure('server_peak_rss', Math.max(scanPeak, peak), 'MB');
    figure('server_rss_end', server.rssMb(), 'MB');
  } finally {
    await server?.stop();
    await te.cleanup();
    dovecotCpu.stop();
    await dovecot.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
