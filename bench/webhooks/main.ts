// bench/webhooks: events per second fanned out to 10 endpoints on a local receiver, signed and
// logged (attempt rows written), sustained for 20 s; next to it, in the same run, a bare undici
// request loop against the same receiver (the floor), measured before and after the webhook phase
// (the mean is the floor: this machine's load moves within a run). The outbox backlog must return
// to zero.
//
//   npm run build && node dist/bench/webhooks/main.js [--processes 2]
//   (SVC_BENCH_DATABASE_URL=postgres://… runs the server on Postgres; default SQLite in a temp dir)
// --processes 2 (Postgres only) adds `svc serve` child processes on the same database: every
// server's dispatcher claims from the one outbox, and deliveries are counted at the receiver.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { keyAccess, SCOPES } from '../../src/auth/access.js';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/context.js';
import { announceEvents, recordEvent } from '../../src/events/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { createLogger } from '../../src/platform/log.js';
import { startServer } from '../../src/server/serve.js';
import { CONNECTIONS_PER_ORIGIN } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/service.js';
import { createWorkspace } from '../../src/workspaces/service.js';
import { createTestDatabase } from '../../test/helpers/db.js';
import { type BenchServer, startBenchServer } from '../lib.js';

const ENDPOINTS = 10;
const RUN_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const FLOOR_SECONDS = 5;
const CONCURRENCY = 256; // the dispatcher's in-flight limit
const CONNECTIONS = CONNECTIONS_PER_ORIGIN; // the dispatcher's connections per origin
const MAX_BACKLOG = 20_000; // deliveries waiting; the producers pause above this
const PRODUCERS = 8;
const DRAIN_LIMIT_SECONDS = 120;

const here = path.dirname(fileURLToPath(import.meta.url));
const processesFlag = process.argv.indexOf('--processes');
const PROCESSES = processesFlag >= 0 ? Number(process.argv[processesFlag + 1]) : 1;

async function startReceiverProcess(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [path.join(here, 'receiver.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

const sampleBody = JSON.stringify({
  type: 'message.created',
  timestamp: new Date().toISOString(),
  workspace_id: 'ws_01bench0000000000000000000',
  inbox_id: 'inb_01bench000000000000000000',
  data: {
    message: {
      id: 'm_x',
      conversation_id: 'cv_x',
      kind: 'message',
      direction: 'in',
      author: { type: 'contact' },
      body: 'Hello, I have a question about my order.',
      attachments: [],
      created_at: new Date().toISOString(),
    },
    conversation: { id: 'cv_x', status: 'open', subject: 'Order 1234' },
    contact: { id: 'ct_x', name: 'Ada Lovelace', emails: ['ada@example.com'], external_ids: [], attributes: { plan: 'pro' }, online: false },
  },
});

/** CPU time of this process (all its threads), in microseconds. */
const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const floorCpu = { micros: 0, requests: 0 };

/** The floor: a bare undici request loop, same concurrency and connections, same receiver. */
async function floor(url: string): Promise<number> {
  const cpuStarted = cpuMicros();
  const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 10_000 });
  const until = Date.now() + FLOOR_SECONDS * 1000;
  let done = 0;
  const loop = async () => {
    while (Date.now() < until) {
      const res = await request(`${url}/floor`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'webhook-id': 'msg_x', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
        body: sampleBody,
      });
      await res.body.dump();
      done++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const seconds = (Date.now() - started) / 1000;
  floorCpu.micros += cpuMicros() - cpuStarted;
  floorCpu.requests += done;
  await agent.close();
  return done / seconds;
}

/** BENCH_CPU_PROFILE=file.cpuprofile records where the server's time goes during the webhook phase. */
async function startProfiler() {
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string) => new Promise<any>((resolve, reject) => session.post(method, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return { stop: async () => (await post('Profiler.stop')).profile };
}

/** BENCH_HEAP_PROFILE=file.heapprofile samples every allocation of the webhook phase (collected ones too). */
async function startHeapSampler() {
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return { stop: async () => (await post('HeapProfiler.stopSampling')).profile };
}

async function receiverCount(url: string): Promise<number> {
  return ((await (await request(`${url}/stats`)).body.json()) as { count: number }).count;
}

async function main() {
  if (!(PROCESSES >= 1 && PROCESSES <= 8)) throw new Error('--processes takes 1 to 8');
  if (PROCESSES > 1 && !process.env.SVC_BENCH_DATABASE_URL) throw new Error('--processes needs Postgres: set SVC_BENCH_DATABASE_URL');
  const receiver = await startReceiverProcess();
  const others: BenchServer[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  // A database of its own on the Postgres server named, so a run never meets another run's master key.
  const database = await createTestDatabase(process.env.SVC_BENCH_DATABASE_URL);
  try {
    const floorBefore = await floor(receiver.url);

    const env = {
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_ADDR: '127.0.0.1:0',
      SVC_METRICS_ADDR: 'off',
      SVC_MASTER_KEY: randomBytes(32).toString('base64'),
      SVC_WEBHOOK_ALLOW_PRIVATE: '1',
      SVC_LOG_LEVEL: 'error',
      ...(database.url ? { SVC_DATABASE_URL: database.url } : {}),
    };
    const config = loadConfig(env);
    const app = buildServices(config, { log: createLogger({ level: 'error' }), createMasterKey: true });
    const server = await startServer(app);
    // The other servers wait for their "listening" line, which SVC_LOG_LEVEL=error would hide.
    for (let i = 1; i < PROCESSES; i++) others.push(await startBenchServer({ ...env, SVC_LOG_LEVEL: 'info' }));
    const { workspace } = await createWorkspace(app, { name: 'Bench', ownerEmail: 'bench@example.com', origin: 'bootstrap' });
    const inbox = await createInbox(app, { workspaceId: workspace.id, name: 'Support' });
    const access = keyAccess(workspace.id, 'key_bench', [...SCOPES], null);
    const secrets: Record<string, string> = {};
    for (let i = 0; i < ENDPOINTS; i++) {
      const { secret } = await createEndpoint(app, access, { url: `${receiver.url}/hook${i}`, events: ['message.created'] });
      secrets[`/hook${i}`] = secret;
    }
    await request(`${receiver.url}/secrets`, { method: 'PUT', body: JSON.stringify(secrets) }).then((r) => r.body.dump());

    const receivedBefore = await receiverCount(receiver.url);
    const attempts = () =>
      PROCESSES > 1
        ? receiverCount(receiver.url).then((n) => n - receivedBefore)
        : app.metrics.registry
            .getSingleMetric('svc_webhook_attempts_total')!
            .get()
            .then((m) => m.values.reduce((sum, v) => sum + v.value, 0));
    const data = JSON.parse(sampleBody).data;
    const profiler = process.env.BENCH_CPU_PROFILE ? await startProfiler() : undefined;
    const heapSampler = process.env.BENCH_HEAP_PROFILE ? await startHeapSampler() : undefined;
    let produced = 0;
    const cpuStarted = cpuMicros();
    const started = Date.now();
    const until = started + RUN_SECONDS * 1000;
    // Producers record events while the backlog allows: several at once, one event per transaction
    // and a turn of the event loop after each, as concurrent API requests would.
    let backlog = 0;
    const watch = setInterval(() => void attempts().then((done) => (backlog = produced * ENDPOINTS - done)), 20);
    const producer = async () => {
      while (Date.now() < until) {
        if (backlog > MAX_BACKLOG) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        await recordEvent(app, { workspaceId: workspace.id, inboxId: inbox.id, contactId: 'ct_x', type: 'message.created', occurredAt: new Date(), data });
        produced++;
        announceEvents(app);
        await new Promise((r) => setImmediate(r));
      }
    };
    await Promise.all(Array.from({ length: PRODUCERS }, producer));
    clearInterval(watch);
    const delivered = await attempts();
    const seconds = (Date.now() - started) / 1000;
    const cpuUsed = cpuMicros() - cpuStarted;
    if (profiler) fs.writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(await profiler.stop()));
    if (heapSampler) fs.writeFileSync(process.env.BENCH_HEAP_PROFILE!, JSON.stringify(await heapSampler.stop()));
    const deliveryRate = delivered / seconds;

    const drainStarted = Date.now();
    let pending = Infinity;
    while (Date.now() - drainStarted < DRAIN_LIMIT_SECONDS * 1000) {
      const row = await app.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      const unsent = await app.db
        .selectFrom('webhook_outbox')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('endpoint_count'), eb.lit(0)).as('n'))
        .executeTakeFirstOrThrow();
      pending = Number(row.n) + Number(unsent.n);
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const floorAfter = await floor(receiver.url);
    const floorRate = (floorBefore + floorAfter) / 2;
    console.log(`floor_undici_requests: ${floorRate.toFixed(0)} requests/s (before ${floorBefore.toFixed(0)}, after ${floorAfter.toFixed(0)})`);
    console.log(
      `webhook_deliveries: ${deliveryRate.toFixed(0)} deliveries/s (${ENDPOINTS} endpoints, ${RUN_SECONDS} s${PROCESSES > 1 ? `, ${PROCESSES} processes` : ''})`,
    );
    if (PROCESSES > 1) {
      const own = (await app.metrics.registry.getSingleMetric('svc_webhook_attempts_total')!.get()).values.reduce((sum, v) => sum + v.value, 0);
      console.log(`webhook_deliveries_by_first_process: ${((100 * own) / Math.max(1, delivered)).toFixed(0)} %`);
    }
    console.log(`webhook_events: ${(deliveryRate / ENDPOINTS).toFixed(0)} events/s`);
    console.log(`ratio: ${(deliveryRate / floorRate).toFixed(2)}`);
    // CPU time per request is steadier than rates on a shared machine: it shows what each delivery
    // costs (recording its share of the event included) next to what a bare request costs. Only
    // this process is measured, so only with one server process.
    if (PROCESSES === 1)
      console.log(`cpu_per_delivery: ${(cpuUsed / delivered).toFixed(0)} µs (floor ${(floorCpu.micros / floorCpu.requests).toFixed(0)} µs per request)`);
    console.log(`backlog_after: ${pending} deliveries`);
    console.log(`backlog_drain: ${((Date.now() - drainStarted) / 1000).toFixed(1)} s`);
    const logged = await app.db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    console.log(`attempts_logged: ${Number(logged.n)} rows for ${produced * ENDPOINTS} deliveries`);
    const stats = (await (await request(`${receiver.url}/stats`)).body.json()) as { count: number; verified: number; failed: number };
    console.log(`signatures_verified: ${stats.verified} sampled, ${stats.failed} failed`);
    await server.close();
    if (pending !== 0 || stats.failed !== 0) process.exitCode = 1;
  } finally {
    for (const other of others) await other.stop();
    receiver.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
