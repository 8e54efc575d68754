// bench/broadcast: recipients per second of a 50,000-recipient broadcast sent by `svc serve`
// through a channel whose SMTP server is a local sink (bench/smtp-floor-server, accepts and
// discards), next to the floor measured in the same run: a bare nodemailer pool (same connection
// count and messages per connection as the broadcast sender) sending the same messages to the same
// sink. Also the server's RSS along the way (it should stay flat).
//
//   npm run build && node dist/bench/broadcast/main.js [recipients]
//   (SVC_BENCH_DATABASE_URL=postgres://…/postgres runs the server on a fresh database of that Postgres
//   server, dropped afterwards; default SQLite in a temp dir)
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { WARMUP_CAP } from '../../src/broadcasts/governance.js';
import { POOL_CONNECTIONS } from '../../src/broadcasts/sender.js';
import { openDatabase } from '../../src/db/connection.js';
import { POOL_MESSAGES_PER_CONNECTION } from '../../src/mail/transport.js';
import { iso } from '../../src/platform/clock.js';
import { createTestDatabase } from '../../test/helpers/db.js';
import { runSvc, spawnServer, testEnv } from '../../test/helpers/server.js';
import { figure, rssMb } from '../lib.js';

const COUNT = Math.min(Number(process.argv[2] ?? 50_000), 100_000);
const TIME_LIMIT_MS = 600_000;
const SUBJECT = 'Our spring newsletter';
const TEXT = `Hello,\n\n${'Here is what is new this spring at our shop, with a few offers for you. '.repeat(20)}\n\nUnsubscribe: {{unsubscribe_url}}\n`;
const HTML = `<html><body><h1>Spring news</h1>${'<p>Here is what is new this spring at our shop, with a few offers for you.</p>'.repeat(20)}<p><a href="{{unsubscribe_url}}">Unsubscribe</a></p></body></html>`;

const recipient = (i: number) => `reader${i}@bench-rcpt.example`;

async function startSink(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.resolve('dist/bench/smtp-floor-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`sink exited with ${code}`)));
  });
  return { child, port };
}

/** The floor: the same messages (headers, link per recipient) through a bare nodemailer pool. */
async function floor(port: number, count: number): Promise<number> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: POOL_CONNECTIONS,
    maxMessages: POOL_MESSAGES_PER_CONNECTION,
  });
  const started = performance.now();
  const window = 200;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const url = `http://127.0.0.1:8080/v1/unsubscribe/bc_01hzzzzzzzzzzzzzzzzzzzzzzz-${i}-abcdefghjkmn`;
      await transport.sendMail({
        from: { name: 'Bench', address: 'news@bench.example' },
        to: recipient(i),
        subject: SUBJECT,
        text: TEXT.replace('{{unsubscribe_url}}', url),
        html: HTML.replace('{{unsubscribe_url}}', url),
        messageId: `<bc_01hzzzzzzzzzzzzzzzzzzzzzzz-${i}-abcdefghjkmn@bench.example>`,
        headers: {
          'List-Unsubscribe': `<${url}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          Precedence: 'bulk',
          'X-Svc-Broadcast': `bc_01hzzzzzzzzzzzzzzzzzzzzzzz-${i}-abcdefghjkmn`,
        },
      });
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  transport.close();
  return count / ((performance.now() - started) / 1000);
}

async function main() {
  const sink = await startSink();
  // On Postgres: a fresh database on that server, dropped at the end.
  const pgDb = await createTestDatabase(process.env.SVC_BENCH_DATABASE_URL);
  const te = await testEnv({ SVC_METRICS_ADDR: 'off', SVC_LOG_LEVEL: 'info', ...(pgDb.url ? { SVC_DATABASE_URL: pgDb.url } : {}) });
  const env = te.env;
  let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
  try {
    await floor(sink.port, 2000); // warm-up
    // The machine is shared: the floor is measured before and after the broadcast, and the ratio
    // is taken against their mean.
    const floorBefore = await floor(sink.port, COUNT);

    const must = async (args: string[]) => {
      const r = await runSvc(args, { env });
      if (r.code !== 0) throw new Error(`svc ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    await must(['migrate', 'up']);
    const workspaceId = await must(['bootstrap', '--email', 'owner@bench.example', '--workspace', 'Bench']);
    const inboxId = await must(['inbox', 'create', '--workspace', 'Bench', '--name', 'News']);
    await must([
      'channel',
      'create-email',
      '--workspace',
      'Bench',
      '--inbox',
      inboxId,
      '--name',
      'News',
      '--address',
      'news@bench.example',
      '--display-name',
      'Bench',
      '--smtp-host',
      '127.0.0.1',
      '--smtp-port',
      String(sink.port),
      '--tls',
      'none',
    ]);
    const apiKey = await must(['api-key', 'create', '--workspace', 'Bench', '--name', 'bench']);
    // A workspace past its warm-up (a fresh one may mail 500 recipients on its first day).
    const handle = openDatabase({ databaseUrl: env.SVC_DATABASE_URL, dataDir: env.SVC_DATA_DIR });
    const now = iso(Date.now());
    await handle.db
      .insertInto('broadcast_governance')
      .values({
        workspace_id: workspaceId,
        status: null,
        reason: null,
        suspended_by: null,
        suspended_at: null,
        decided_at: null,
        daily_limit: null,
        warmup_allowance: WARMUP_CAP,
        warmup_through_day: null,
        request_email: null,
        request_website: null,
        request_senders: null,
        request_consent: null,
        requested_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await handle.close();

    server = await spawnServer(env);
    const pid = server.child.pid!;
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(server!.url + p, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as any;
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const all = Array.from({ length: COUNT }, (_, i) => recipient(i));
    const b = await api('POST', '/v1/broadcasts', {
      inbox_id: inboxId,
      subject: SUBJECT,
      text: TEXT,
      html: HTML,
      recipients: { emails: all.slice(0, 10_000) },
    });
    for (let i = 10_000; i < COUNT; i += 10_000) await api('POST', `/v1/broadcasts/${b.id}/recipients`, { emails: all.slice(i, i + 10_000) });

    const rssStart = rssMb(pid);
    const rssSamples: number[] = [];
    const rssAt = new Map<number, number>();
    const started = performance.now();
    await api('POST', `/v1/broadcasts/${b.id}/schedule`, {});
    let state: any;
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      rssSamples.push(rssMb(pid));
      state = await api('GET', `/v1/broadcasts/${b.id}`);
      for (const q of [25, 50, 75]) if (!rssAt.has(q) && state.counts.sent >= (COUNT * q) / 100) rssAt.set(q, rssSamples[rssSamples.length - 1]);
      if (state.status !== 'scheduled' && state.status !== 'sending') break;
      if (performance.now() - started > TIME_LIMIT_MS) throw new Error('the broadcast did not finish in time');
    }
    const seconds = (performance.now() - started) / 1000;
    if (state.status !== 'sent' || state.counts.sent !== COUNT) throw new Error(`broadcast ended ${state.status} with ${JSON.stringify(state.counts)}`);
    const rate = COUNT / seconds;
    const rssEnd = rssMb(pid);
    await server.kill('SIGTERM');
    server = undefined;
    const floorAfter = await floor(sink.port, COUNT);
    const floorRate = (floorBefore + floorAfter) / 2;
    figure('floor_nodemailer_pool_recipients_per_s_before', floorBefore, 'recipients/s');
    figure('floor_nodemailer_pool_recipients_per_s_after', floorAfter, 'recipients/s');
    figure('broadcast_recipients_per_s', rate, 'recipients/s');
    figure('ratio', (rate / floorRate).toFixed(2));
    figure('server_rss_start', rssStart, 'MB');
    for (const [q, mb] of rssAt) figure(`server_rss_at_${q}_percent`, mb, 'MB');
    figure('server_rss_peak', Math.max(...rssSamples), 'MB');
    figure('server_rss_end', rssEnd, 'MB');
    figure('database', env.SVC_DATABASE_URL ? 'postgres' : 'sqlite');
  } finally {
    await server?.kill('SIGTERM');
    sink.child.kill('SIGTERM');
    await te.cleanup();
    await pgDb.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
