// bench/backup: backup and restore time and peak RSS for a database of 200,000 messages with 2 GiB
// of attachments (generated straight into the tables and the file storage), and how the server's
// write latency (p99, max) moves while `svc backup` runs next to it. The floor is the same write loop
// against the same server with no backup running.
//
//   npm run build && node dist/bench/backup/main.js
//   (BENCH_MESSAGES, BENCH_ATTACHMENT_MB and BENCH_WRITE_RPS change the size; everything it makes
//    is removed at the end)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { attachmentKey } from '../../src/conversations/files.js';
import { newId } from '../../src/platform/ids.js';
import { MAIN, runSvc, type TestEnv, tempDir, testEnv } from '../../test/helpers/server.js';
import { figure, startBenchServer } from '../lib.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const MESSAGES_PER_CONVERSATION = 10;
const ATTACHMENT_MB = Number(process.env.BENCH_ATTACHMENT_MB ?? 2048);
const FILE_MB = 1;
const WRITE_RPS = Number(process.env.BENCH_WRITE_RPS ?? 50);
const WRITE_CONCURRENCY = 4;
const FLOOR_SECONDS = 15;
const MAX_BACKUP_SECONDS = 900;

/** Fills the SQLite database directly: contacts, conversations, messages, and 1 MiB attachment files. */
function generate(te: TestEnv, workspaceId: string, inboxId: string): { conversationIds: string[]; fileBytes: number } {
  const db = new SQLite(path.join(te.dataDir, 'svc.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const now = new Date().toISOString();
  const insContact = db.prepare(
    `insert into contacts (id, workspace_id, name, attributes, merged_into_id, created_at, updated_at) values (?, ?, ?, '{}', null, ?, ?)`,
  );
  const insConversation = db.prepare(
    `insert into conversations (id, workspace_id, inbox_id, contact_id, channel_id, source, status, assignee_id, priority, subject, spam, imported, imported_at, created_at, updated_at, last_message_at)
     values (?, ?, ?, ?, null, 'email', 'open', null, null, ?, 0, 0, null, ?, ?, ?)`,
  );
  const insMessage = db.prepare(
    `insert into messages (id, workspace_id, conversation_id, kind, direction, author_type, author_person_id, author_key_id, author_contact_id, body, html, subject, automatic, details,
       delivery_status, delivery_error, delivery_attempts, sent_at, mail_message_id, mail_references, mail_reply_to, attachments_omitted, raw_storage_key, raw_size, raw_sha256, raw_stored_at, created_at)
     values (?, ?, ?, 'message', 'in', 'contact', null, null, ?, ?, null, ?, 0, null, null, null, 0, null, ?, null, null, 0, null, null, null, null, ?)`,
  );
  const insAttachment = db.prepare(
    `insert into attachments (id, workspace_id, conversation_id, message_id, filename, content_type, size, sha256, storage_key, content_id, inline, created_at)
     values (?, ?, ?, ?, 'report.pdf', 'application/pdf', ?, ?, ?, null, 0, ?)`,
  );
  const files = Math.floor(ATTACHMENT_MB / FILE_MB);
  const body = 'Hello, I have a question about my last order and the invoice that came with it. '.repeat(4);
  const conversationIds: string[] = [];
  const attachTo: { cv: string; m: string }[] = [];
  const conversations = Math.ceil(MESSAGES / MESSAGES_PER_CONVERSATION);
  const perTx = 2000;
  for (let start = 0; start < conversations; start += perTx) {
    db.transaction(() => {
      for (let c = start; c < Math.min(conversations, start + perTx); c++) {
        const ct = newId('ct');
        const cv = newId('cv');
        insContact.run(ct, workspaceId, `Customer ${c}`, now, now);
        insConversation.run(cv, workspaceId, inboxId, ct, `Order ${c}`, now, now, now);
        conversationIds.push(cv);
        for (let k = 0; k < MESSAGES_PER_CONVERSATION && c * MESSAGES_PER_CONVERSATION + k < MESSAGES; k++) {
          const m = newId('m');
          insMessage.run(m, workspaceId, cv, ct, body, `Order ${c}`, `${m}@bench.example`, now);
          if (attachTo.length < files) attachTo.push({ cv, m });
        }
      }
    })();
  }
  const root = path.join(te.dataDir, 'files');
  const chunk = randomBytes(FILE_MB * 1024 * 1024);
  db.transaction(() => {
    for (const { cv, m } of attachTo) {
      const id = newId('att');
      const key = attachmentKey(workspaceId, id);
      insAttachment.run(id, workspaceId, cv, m, chunk.length, 'x'.repeat(64), key, now);
      const file = path.join(root, key);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      chunk.writeUInt32BE(attachTo.length, 0);
      fs.writeFileSync(file, chunk);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { conversationIds, fileBytes: attachTo.length * chunk.length };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Posts notes at WRITE_RPS until stop() and records each request's latency. */
function writeLoop(url: string, apiKey: string, conversationIds: string[]) {
  const latencies: number[] = [];
  let running = true;
  let errors = 0;
  const perWorkerGapMs = (1000 * WRITE_CONCURRENCY) / WRITE_RPS;
  const worker = async (w: number) => {
    let i = w;
    while (running) {
      const started = performance.now();
      const cv = conversationIds[(i += WRITE_CONCURRENCY) % conversationIds.length];
      const res = await fetch(`${url}/v1/conversations/${cv}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'note', body: 'checking on this' }),
      });
      await res.arrayBuffer();
      const ms = performance.now() - started;
      if (res.status !== 201) errors++;
      latencies.push(ms);
      const wait = perWorkerGapMs - ms;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  };
  const workers = Array.from({ length: WRITE_CONCURRENCY }, (_, w) => worker(w));
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      const sorted = [...latencies].sort((a, b) => a - b);
      return { count: sorted.length, errors, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 };
    },
  };
}

/** Runs `svc <args>`, sampling its peak RSS (VmHWM) while it runs. */
function measured(args: string[], env: Record<string, string>): Promise<{ seconds: number; peakRssMb: number; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let peak = 0;
    child.stderr.on('data', (d) => (stderr += d));
    const sample = () => {
      try {
        const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
      } catch {
        /* exited */
      }
    };
    const timer = setInterval(sample, 50);
    const limit = setTimeout(() => child.kill('SIGKILL'), MAX_BACKUP_SECONDS * 1000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      clearTimeout(limit);
      resolve({ seconds: (performance.now() - started) / 1000, peakRssMb: peak, code, stderr });
    });
  });
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    total += e.isDirectory() ? dirBytes(full) : fs.statSync(full).size;
  }
  return total;
}

async function main() {
  const source = await testEnv({ SVC_LOG_LEVEL: 'info' });
  const target = await testEnv({ SVC_LOG_LEVEL: 'info', SVC_MASTER_KEY: source.env.SVC_MASTER_KEY });
  if (source.env.SVC_DATABASE_URL) throw new Error('bench/backup generates a SQLite database; unset SVC_TEST_DATABASE_URL');
  const out = path.join(tempDir('svc-bench-backup-'), 'backup');
  try {
    const svc = (args: string[]) => runSvc(args, { env: source.env, timeoutMs: 120_000 });
    await svc(['migrate', 'up']);
    const workspaceId = (await svc(['bootstrap', '--email', 'bench@example.com', '--workspace', 'Bench'])).stdout.trim();
    const inboxId = (await svc(['inbox', 'create', '--workspace', 'Bench', '--name', 'Support'])).stdout.trim();
    const apiKey = (await svc(['api-key', 'create', '--workspace', 'Bench', '--name', 'bench'])).stdout.trim();
    const t0 = performance.now();
    const { conversationIds, fileBytes } = generate(source, workspaceId, inboxId);
    process.stderr.write(
      `generated ${MESSAGES} messages in ${conversationIds.length} conversations and ${(fileBytes / 2 ** 30).toFixed(2)} GiB of files in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
    );
    figure('messages', MESSAGES);
    figure('attachments_gib', fileBytes / 2 ** 30, 'GiB');
    figure('database_mb', fs.statSync(path.join(source.dataDir, 'svc.db')).size / 2 ** 20, 'MB');

    const server = await startBenchServer(source.env);
    try {
      // Warm-up (statement caches, JIT), not measured.
      const warm = writeLoop(server.url, apiKey, conversationIds);
      await new Promise((r) => setTimeout(r, 3000));
      await warm.stop();
      // The floor: the write loop with no backup running.
      const idle = writeLoop(server.url, apiKey, conversationIds);
      await new Promise((r) => setTimeout(r, FLOOR_SECONDS * 1000));
      const floor = await idle.stop();
      // The same loop while the backup runs.
      const busy = writeLoop(server.url, apiKey, conversationIds);
      const backup = await measured(['backup', '--out', out], source.env);
      const during = await busy.stop();
      if (backup.code !== 0) throw new Error(`backup failed: ${backup.stderr}`);
      figure('backup_seconds', backup.seconds, 's');
      figure('backup_peak_rss_mb', backup.peakRssMb, 'MB');
      figure('backup_bytes_gib', dirBytes(out) / 2 ** 30, 'GiB');
      figure('write_p50_idle_ms', floor.p50, 'ms');
      figure('write_p99_idle_ms', floor.p99, 'ms');
      figure('write_max_idle_ms', floor.max, 'ms');
      figure('write_p50_during_backup_ms', during.p50, 'ms');
      figure('write_p99_during_backup_ms', during.p99, 'ms');
      figure('write_max_during_backup_ms', during.max, 'ms');
      figure('writes_during_backup', during.count);
      figure('write_errors', floor.errors + during.errors);
      figure('write_p99_rise_ms', during.p99 - floor.p99, 'ms');
      process.stdout.write(`ratio: ${(during.p99 / Math.max(floor.p99, 0.001)).toFixed(2)}\n`);
    } finally {
      await server.stop();
    }

    const restore = await measured(['restore', '--from', out], target.env);
    if (restore.code !== 0) throw new Error(`restore failed: ${restore.stderr}`);
    figure('restore_seconds', restore.seconds, 's');
    figure('restore_peak_rss_mb', restore.peakRssMb, 'MB');
    const restored = await startBenchServer(target.env);
    const check = await fetch(`${restored.url}/v1/conversations?limit=1`, { headers: { authorization: `Bearer ${apiKey}` } });
    figure('restored_server_answers', check.status);
    await restored.stop();
  } finally {
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
    await source.cleanup();
    await target.cleanup();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
