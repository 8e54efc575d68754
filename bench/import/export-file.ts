// bench/import, export-file case: a generated mbox zip of about 1 GB (Takeout-like: one deflated
// mbox, threads in both directions, a third of the messages with an attachment) uploaded to a real
// `svc serve` on 127.0.0.1 in 8 MiB parts with their SHA-256, completed (the answer comes at once;
// the server verifies and reads the file in a background job, followed here through GET …/upload),
// then scanned and copied through the API. Prints the seconds of the upload and of the processing,
// the rates, and the server's peak RSS per phase and over the whole run (sampled every 100 ms;
// goal: under 300 MB however large the file). The zip is generated into a temp dir and deleted
// afterwards. With --no-copy the run ends once the file is read (no scan, no copy).
// Run: npm run build && node dist/bench/import/export-file.js [megabytes=1000] [--no-copy]   (at most 4000)
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { parts, sha256 } from '../../test/helpers/export-files.js';
import { runSvc, tempDir, testEnv } from '../../test/helpers/server.js';
import { figure, startBenchServer } from '../lib.js';

const args = process.argv.slice(2);
const TARGET_BYTES = Math.min(Math.max(Number(args.find((a) => !a.startsWith('--')) ?? 1000), 10), 4000) * 1_000_000;
const COPY = !args.includes('--no-copy');
const PART_BYTES = 8 * 1024 * 1024;
const TIME_LIMIT_MS = 45 * 60_000;
const TEAM = 'support@bench.test';

const WORDS =
  'printer invoice account login password order refund shipping broken update thanks please help urgent question answer delivery package missing charge card error screen again today tomorrow monday week month customer support team reply problem fixed working install version'.split(
    ' ',
  );

function sentence(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]);
  return out.join(' ');
}

function asctime(d: Date): string {
  const [day, , mon] = d.toUTCString().split(' ');
  return `${day.replace(',', '')} ${mon} ${String(d.getUTCDate()).padStart(2, ' ')} ${d.toISOString().slice(11, 19)} ${d.getUTCFullYear()}`;
}

/** Messages in mbox form, two per thread (customer, then team reply), newest last, until `written()` reaches the target. */
function* mboxMessages(written: () => number, counter: { messages: number }): Generator<Buffer> {
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const start = Date.now() - 3 * 365 * 86_400_000;
  for (let thread = 0; written() < TARGET_BYTES; thread++) {
    const customer = `customer${thread % 5000}@example.org`;
    const at = new Date(start + thread * 60_000);
    const q = `q${thread}@example.org`;
    const subject = `Question ${thread}: ${sentence(rand, 4)}`;
    const body = Array.from({ length: 8 + Math.floor(rand() * 30) }, () => sentence(rand, 12)).join('\n');
    let question: string;
    if (thread % 3 === 0) {
      const attachment = crypto
        .randomBytes(45_000 + Math.floor(rand() * 60_000))
        .toString('base64')
        .replace(/(.{76})/g, '$1\n');
      question =
        `From: Customer ${thread % 5000} <${customer}>\nTo: ${TEAM}\nSubject: ${subject}\nDate: ${at.toUTCString()}\nMessage-ID: <${q}>\nMIME-Version: 1.0\n` +
        `Content-Type: multipart/mixed; boundary="b${thread}"\n\n--b${thread}\nContent-Type: text/plain; charset=utf-8\n\n${body}\nFrom the customer, with a log attached.\n` +
        `--b${thread}\nContent-Type: application/octet-stream; name="log${thread}.bin"\nContent-Disposition: attachment; filename="log${thread}.bin"\nContent-Transfer-Encoding: base64\n\n${attachment}\n--b${thread}--\n`;
    } else {
      question = `From: Customer ${thread % 5000} <${customer}>\nTo: ${TEAM}\nSubject: ${subject}\nDate: ${at.toUTCString()}\nMessage-ID: <${q}>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n${body}\n`;
    }
    const replyAt = new Date(at.getTime() + 30_000);
    const reply =
      `From: Support <${TEAM}>\nTo: ${customer}\nSubject: Re: ${subject}\nDate: ${replyAt.toUTCString()}\nMessage-ID: <a${thread}@bench.test>\nIn-Reply-To: <${q}>\nReferences: <${q}>\n` +
      `MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n${sentence(rand, 40)}\n>From your last mail: ${sentence(rand, 10)}\n`;
    counter.messages += 2;
    yield Buffer.from(
      `From ${customer} ${asctime(at)}\n${question.replace(/^(>*From )/gm, '>$1')}\nFrom ${TEAM} ${asctime(replyAt)}\n${reply.replace(/^(>*From )/gm, '>$1')}\n`,
    );
  }
}

async function makeZip(file: string): Promise<number> {
  const zip = new yazl.ZipFile();
  const counter = { messages: 0 };
  let written = 0;
  zip.addReadStream(Readable.from(mboxMessages(() => written, counter)), 'Takeout/Mail/All mail Including Spam and Trash.mbox', { compress: true });
  zip.end();
  const out = zip.outputStream as unknown as Readable;
  out.on('data', (c: Buffer) => (written += c.length));
  await pipeline(out, fs.createWriteStream(file));
  return counter.messages;
}

async function main() {
  const deadline = Date.now() + TIME_LIMIT_MS;
  const work = tempDir('svc-bench-export-');
  const te = await testEnv({ SVC_METRICS_ADDR: 'off' });
  let server: Awaited<ReturnType<typeof startBenchServer>> | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const file = path.join(work, 'export.zip');
    const g0 = performance.now();
    const messages = await makeZip(file);
    const bytes = fs.statSync(file).size;
    figure('export_zip_bytes', bytes, 'B');
    figure('export_messages', messages, 'messages');
    figure('export_generated_s', (performance.now() - g0) / 1000, 's');

    const env = te.env;
    for (const args of [
      ['migrate', 'up'],
      ['bootstrap', '--email', 'owner@bench.test', '--workspace', 'Bench'],
    ]) {
      const r = await runSvc(args, { env });
      if (r.code !== 0) throw new Error(r.stderr);
    }
    const inbox = (await runSvc(['inbox', 'create', '--workspace', 'Bench', '--name', 'Support'], { env })).stdout.trim();
    const channel = await runSvc(['channel', 'create-email', '--workspace', 'Bench', '--inbox', inbox, '--name', 'Mail', '--address', TEAM], { env });
    if (channel.code !== 0) throw new Error(channel.stderr);
    const key = (await runSvc(['api-key', 'create', '--workspace', 'Bench', '--name', 'bench'], { env })).stdout.trim();
    server = await startBenchServer(env);
    figure('server_rss_start', server.rssMb(), 'MB');
    let peak = server.rssMb();
    sampler = setInterval(() => {
      try {
        peak = Math.max(peak, server!.rssMb());
      } catch {
        /* exited */
      }
    }, 100);
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
    const m = await api('POST', '/v1/migrations', { provider: 'export_file', inbox_id: inbox });

    const phase = (name: string) => process.stderr.write(`phase ${name} ${Date.now()}\n`);
    phase('upload');
    const u0 = performance.now();
    let n = 0;
    const whole = crypto.createHash('sha256');
    for await (const part of parts(file, PART_BYTES)) {
      whole.update(part);
      n++;
      const res = await fetch(`${server.url}/v1/migrations/${m.id}/upload/parts/${n}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream', 'x-part-sha256': sha256(part) },
        body: part as unknown as BodyInit,
      });
      if (res.status !== 200) throw new Error(`part ${n}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      if (Date.now() > deadline) throw new Error('time limit');
    }
    const uploadSeconds = (performance.now() - u0) / 1000;
    const wholeSha256 = whole.digest('hex');
    const uploadPeak = peak;
    peak = server.rssMb();
    phase('processing');
    const r0 = performance.now();
    const completed = await api('POST', `/v1/migrations/${m.id}/upload/complete`, { parts: n, sha256: wholeSha256 });
    const answerMs = performance.now() - r0;
    if (completed.upload.state !== 'processing') throw new Error(`complete answered ${JSON.stringify(completed.upload)}`);
    let upload = completed.upload;
    while (upload.state === 'processing') {
      if (Date.now() > deadline) throw new Error(`still processing: ${JSON.stringify(upload.processing)}`);
      await new Promise((r) => setTimeout(r, 250));
      upload = await api('GET', `/v1/migrations/${m.id}/upload`);
    }
    const readSeconds = (performance.now() - r0) / 1000;
    if (upload.state !== 'read') throw new Error(`processing ended ${JSON.stringify(upload.processing)}`);
    if (upload.file.messages !== messages) throw new Error(`read ${upload.file.messages} of ${messages}`);
    const readPeak = peak;
    peak = server.rssMb();
    fs.rmSync(file, { force: true });
    figure('export_upload_s', uploadSeconds, 's');
    figure('export_upload_mb_per_s', bytes / 1e6 / uploadSeconds, 'MB/s');
    figure('export_upload_parts', n, 'parts');
    figure('export_complete_answer_ms', answerMs, 'ms');
    figure('export_processing_s', readSeconds, 's');
    figure('export_processing_s_per_gb', readSeconds / (bytes / 1e9), 's');
    figure('export_read_msgs_per_s', messages / readSeconds, 'msg/s');
    figure('server_peak_rss_upload', uploadPeak, 'MB');
    figure('server_peak_rss_processing', readPeak, 'MB');
    if (!COPY) {
      figure('server_peak_rss', Math.max(uploadPeak, readPeak), 'MB');
      figure('server_rss_end', server.rssMb(), 'MB');
      return;
    }

    const waitFor = async (state: string) => {
      for (;;) {
        const cur = await api('GET', `/v1/migrations/${m.id}`);
        if (cur.state === state) return cur;
        if (cur.state === 'needs_attention') throw new Error(JSON.stringify(cur.attention));
        if (Date.now() > deadline)
          throw new Error(`the bench did not finish within ${TIME_LIMIT_MS / 60_000} minutes (state ${cur.state}, ${JSON.stringify(cur.progress)})`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    phase('scan');
    const s0 = performance.now();
    await api('POST', `/v1/migrations/${m.id}/scan`);
    const ready = await waitFor('ready');
    const scanSeconds = (performance.now() - s0) / 1000;
    const scanPeak = peak;
    peak = server.rssMb();
    if (ready.plan.summary.total !== messages) throw new Error(`scan found ${ready.plan.summary.total} of ${messages}`);
    phase('copy');
    const c0 = performance.now();
    await api('POST', `/v1/migrations/${m.id}/start`);
    const done = await waitFor('syncing');
    const copySeconds = (performance.now() - c0) / 1000;
    if (done.progress.copied !== messages) throw new Error(`copied ${done.progress.copied} of ${messages}: ${JSON.stringify(done.progress)}`);

    phase('end');
    figure('export_scan_s', scanSeconds, 's');
    figure('export_copy_msgs_per_s', messages / copySeconds, 'msg/s');
    figure('export_import_msgs_per_s', messages / (readSeconds + scanSeconds + copySeconds), 'msg/s');
    figure('server_peak_rss_scan', scanPeak, 'MB');
    figure('server_peak_rss_copy', peak, 'MB');
    figure('server_peak_rss', Math.max(uploadPeak, readPeak, scanPeak, peak), 'MB');
    figure('server_rss_end', server.rssMb(), 'MB');
  } finally {
    if (sampler) clearInterval(sampler);
    await server?.stop();
    await te.cleanup();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
