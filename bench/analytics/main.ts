// bench/analytics: web analytics ingestion and the dashboard query.
//
// 1. Ingestion: a real `svc serve` child process; this process is the load generator on the same
//    machine, posting tracker events (POST /a/e, keep-alive, BENCH_CONCURRENCY connections) for
//    BENCH_SECONDS. Each connection comes from its own loopback address (127.x.y.z) and moves to a
//    new one every 100 events, as many visitors would (one address may send 120 events a minute).
//    Prints accepted events/s, p50/p99 answer time, drops, the events written, RSS at start and end.
//    Goal: ≥ 5,000 events/s sustained, p99 ≤ 50 ms, RSS flat over 5 minutes (BENCH_SECONDS=300).
// 2. Dashboard: a property with BENCH_EVENTS events over 30 days (default 10,000,000): 29 finished
//    days as the daily rollups the rollup job keeps (the distribution of pages, sources, countries,
//    browsers… of that many events) and today's share as raw events and visits. Prints p50/p99 of
//    the 30-day queries the dashboard makes. Goal: ≤ 200 ms.
//
//
// The data dir (and on Postgres the database svc_bench_<key>) with the dashboard's events is kept
// under BENCH_CACHE_DIR (default <tmp>/svc-bench-cache), named by VERSION, dialect, BENCH_EVENTS and
// the UTC day (its "today" is the day it was built), and reused; meta.json is written last (no
// meta, no cache). Each run adds a new load property and deletes its events at the end.
// BENCH_PART=ingest|dashboard runs one part only.
//
//   npm run build && node dist/bench/analytics/main.js
//   SVC_TEST_DATABASE_URL=postgres://… node dist/bench/analytics/main.js   (Postgres)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Client } from 'undici';
import { createProperty } from '../../src/analytics/properties.js';
import { DIMENSIONS } from '../../src/analytics/stats.js';
import { dayOf } from '../../src/analytics/visitor.js';
import { type PendingEvent, writeBatch } from '../../src/analytics/writer.js';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/context.js';
import { createLogger } from '../../src/platform/log.js';
import { runSvc } from '../../test/helpers/server.js';
import { type BenchServer, cpuSeconds, figure, postgresCpuSeconds, seededEnv, startBenchServer } from '../lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 30);
const PART = process.env.BENCH_PART ?? 'both';
const VERSION = 2;
const DAY_MS = 86_400_000;
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];

/** mulberry32: a 32-bit generator in integer arithmetic (an LCG multiplied in doubles lost its low bits and cycled early). */
function random(seed: number) {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = Math.imul(x ^ (x >>> 15), x | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Cached {
  env: Record<string, string>;
  apiKey: string;
  workspaceId: string;
  dashboardId: string | null;
}

/** The kept data dir (and Postgres database) of this dialect, size and day; made when missing. */
async function cachedEnv(dialect: string, day: string): Promise<{ cached: Cached; save(c: Cached): void }> {
  const key = `analytics_v${VERSION}_${dialect}_${EVENTS}_${day.replaceAll('-', '')}`;
  const dir = path.join(process.env.BENCH_CACHE_DIR ?? path.join(os.tmpdir(), 'svc-bench-cache'), key);
  const metaFile = path.join(dir, 'meta.json');
  const save = (c: Cached) => fs.writeFileSync(metaFile, JSON.stringify(c, null, 2));
  if (fs.existsSync(metaFile)) return { cached: JSON.parse(fs.readFileSync(metaFile, 'utf8')) as Cached, save };
  fs.rmSync(dir, { recursive: true, force: true });
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  const extra: Record<string, string> = { SVC_DATA_DIR: dataDir };
  const adminUrl = process.env.SVC_TEST_DATABASE_URL;
  if (adminUrl) {
    // Named by the cache dir too: another BENCH_CACHE_DIR (another checkout) keeps its own database.
    const name = `svc_bench_${key}_${createHash('sha256').update(dir).digest('hex').slice(0, 6)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    extra.SVC_DATABASE_URL = url.toString();
  }
  const { te, apiKey } = await seededEnv(extra);
  await te.cleanup(); // the unused temporary dir and database testEnv made; ours stay
  const setup = buildServices(loadConfig(te.env), { log: createLogger({ level: 'warn' }) });
  const ws = await setup.db.selectFrom('workspaces').select('id').executeTakeFirstOrThrow();
  await setup.close();
  const cached = { env: te.env, apiKey, workspaceId: ws.id, dashboardId: null };
  save(cached);
  return { cached, save };
}

async function main() {
  const dialect = process.env.SVC_TEST_DATABASE_URL ? 'postgres' : 'sqlite';
  figure('database', dialect);
  const { cached, save } = await cachedEnv(dialect, dayOf(Date.now()));
  await runSvc(['migrate', 'up'], { env: cached.env }); // a kept data dir made before a new migration
  const setup = buildServices(loadConfig(cached.env), { log: createLogger({ level: 'warn' }) });
  const ws = { id: cached.workspaceId };
  const apiKey = cached.apiKey;
  const load = await createProperty(setup, { workspaceId: ws.id, domain: `load-${Date.now()}.example` });
  if (!cached.dashboardId && PART !== 'ingest') {
    const t0 = performance.now();
    cached.dashboardId = (await createProperty(setup, { workspaceId: ws.id, domain: 'dashboard.example' })).id;
    await generateDashboard(setup, ws.id, cached.dashboardId);
    figure('dashboard data generated in', (performance.now() - t0) / 1000, 's');
    save(cached);
  }
  const server = await startBenchServer(cached.env);
  if (PART !== 'dashboard') await ingestion(server, setup, load);
  if (PART !== 'ingest') await dashboard(server, apiKey, cached.dashboardId!);
  await server.stop();
  await setup.db.deleteFrom('analytics_events').where('property_id', '=', load.id).execute();
  await setup.db.deleteFrom('analytics_visits').where('property_id', '=', load.id).execute();
  await setup.db.deleteFrom('analytics_properties').where('id', '=', load.id).execute();
  await setup.close();
}

type Setup = ReturnType<typeof buildServices>;

async function ingestion(server: BenchServer, setup: Setup, load: { id: string; domain: string }) {
  const target = new URL(server.url);
  // ---- 1. ingestion
  const rssStart = server.rssMb();
  const latencies: number[] = [];
  let accepted = 0;
  let dropped = 0;
  const dropReasons = new Map<string, number>();
  let next = 1;
  // 127.x.y.0 is skipped: two connections must not share an address (it would send twice the
  // per-address rate and read as `rate` drops).
  const address = () => {
    while ((next & 255) === 0) next++;
    const n = next++;
    return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  };
  const ends = performance.now() + SECONDS * 1000;
  const headers = { origin: `https://${load.domain}`, 'user-agent': UA, 'content-type': 'text/plain' };
  // undici rather than node:http: the generator shares the two cores with svc, and its CPU per
  // request is about half of http.request's.
  const post = async (client: Client, i: number) => {
    const body = JSON.stringify({
      d: load.domain,
      u: `https://${load.domain}/page/${i % 500}?utm_source=s${i % 20}`,
      r: 'https://www.google.com/',
      w: 1280,
    });
    const t0 = performance.now();
    const res = await client.request({ path: '/a/e', method: 'POST', headers, body });
    await res.body.dump();
    latencies.push(performance.now() - t0);
    const reason = res.headers['svc-analytics-dropped'];
    if (res.statusCode === 202 && !reason) accepted++;
    else {
      dropped++;
      const key = String(reason ?? res.statusCode);
      dropReasons.set(key, (dropReasons.get(key) ?? 0) + 1);
    }
  };
  const worker = async () => {
    let i = 0;
    while (performance.now() < ends) {
      const client = new Client(target.origin, { localAddress: address() });
      for (let k = 0; k < 100 && performance.now() < ends; k++) await post(client, i++);
      await client.close();
    }
  };
  const started = performance.now();
  // RSS every 30 s: "flat" is read from the series, not from its two ends.
  const rssSeries: number[] = [];
  const rssTimer = setInterval(() => rssSeries.push(Math.round(server.rssMb())), 30_000);
  const serverCpu = cpuSeconds(server.child.pid!);
  const database = setup.config.databaseUrl ? new URL(setup.config.databaseUrl).pathname.slice(1) : null;
  const pgCpu = database ? postgresCpuSeconds(database) : null;
  const loadCpu = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  clearInterval(rssTimer);
  const served = accepted + dropped;
  // CPU per event: what the figures above cost, less dependent on what else the machine runs.
  figure('ingest server cpu per event', ((cpuSeconds(server.child.pid!) - serverCpu) * 1000) / served, 'ms');
  const gen = process.cpuUsage(loadCpu);
  figure('ingest load generator cpu per event', (gen.user + gen.system) / 1000 / served, 'ms');
  if (database && pgCpu) {
    // Backends started during the run count whole; ones that ended during it are missed (the pool keeps them).
    const pgEnd = postgresCpuSeconds(database);
    figure('ingest postgres backends cpu per event', ((pgEnd.backends - pgCpu.backends) * 1000) / served, 'ms');
    figure(
      'ingest postgres shared processes cpu per event (wal writer, checkpointer…; other databases too)',
      ((pgEnd.shared - pgCpu.shared) * 1000) / served,
      'ms',
    );
  }
  figure('load average (1 min)', os.loadavg()[0]);
  const rssEnd = server.rssMb();
  latencies.sort((a, b) => a - b);
  figure('ingest events/s', accepted / elapsed, 'events/s');
  figure('ingest p50', percentile(latencies, 0.5), 'ms');
  figure('ingest p99', percentile(latencies, 0.99), 'ms');
  figure('ingest dropped', dropped, 'events');
  figure('ingest dropped by reason', [...dropReasons].map(([k, v]) => `${k}=${v}`).join(' ') || 'none');
  figure('ingest rss start', rssStart, 'MB');
  figure('ingest rss end', rssEnd, 'MB');
  figure('ingest rss every 30 s', rssSeries.join(' '), 'MB');
  await new Promise((r) => setTimeout(r, 2500)); // the last buffered second is written
  const written = await setup.db
    .selectFrom('analytics_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('property_id', '=', load.id)
    .executeTakeFirstOrThrow();
  figure('ingest events written', Number(written.n), 'events');
}

/** 29 finished days as rollups and today's share as raw events and visits. */
async function generateDashboard(setup: Setup, workspaceId: string, dashboardId: string) {
  const ws = { id: workspaceId };
  const dash = { id: dashboardId };
  const rand = random(7);
  const today = dayOf(Date.now());
  const perDay = Math.round(EVENTS / 30);
  const cardinality: Record<string, number> = {
    'event:page': 2000,
    'event:name': 5,
    'visit:entry_page': 800,
    'visit:exit_page': 800,
    'visit:source': 300,
    'visit:referrer': 400,
    'visit:utm_source': 40,
    'visit:utm_medium': 10,
    'visit:utm_campaign': 60,
    'visit:country': 120,
    'visit:region': 600,
    'visit:city': 2000,
    'visit:browser': 12,
    'visit:os': 8,
    'visit:device': 3,
  };
  for (let d = 29; d >= 1; d--) {
    const day = dayOf(Date.now() - d * DAY_MS);
    const visits = Math.round(perDay / 3);
    const rows = [{ dimension: '', value: '', share: 1 }];
    for (const dim of Object.keys(DIMENSIONS)) {
      let left = 1;
      for (let v = 0; v < cardinality[dim] && left > 0.0001; v++) {
        const share = v === cardinality[dim] - 1 ? left : left * (0.05 + rand() * 0.2);
        left -= share;
        rows.push({ dimension: dim, value: `${dim.split(':')[1]}-${v}`, share });
      }
    }
    for (let i = 0; i < rows.length; i += 500) {
      await setup.db
        .insertInto('analytics_rollups')
        .values(
          rows.slice(i, i + 500).map((r) => ({
            property_id: dash.id,
            workspace_id: ws.id,
            day,
            dimension: r.dimension,
            value: r.value,
            visitors: Math.round(visits * 0.8 * r.share),
            pageviews: Math.round(perDay * 0.9 * r.share),
            events: Math.round(perDay * r.share),
            visits: Math.round(visits * r.share),
            bounces: Math.round(visits * 0.4 * r.share),
            duration_s: Math.round(visits * 70 * r.share),
          })),
        )
        .execute();
    }
  }
  await setup.db
    .updateTable('analytics_properties')
    .set({ rolled_through: dayOf(Date.now() - DAY_MS) })
    .where('id', '=', dash.id)
    .execute();
  const now = Date.now();
  const batch: PendingEvent[] = [];
  for (let i = 0; i < perDay; i++) {
    batch.push({
      property_id: dash.id,
      workspace_id: ws.id,
      at: new Date(now - Math.floor(rand() * (now - Date.parse(`${today}T00:00:00Z`)))).toISOString(),
      day: today,
      name: i % 20 === 0 ? 'Signup' : 'pageview',
      visitor_id: `v${Math.floor(rand() * perDay * 0.3)}`,
      path: `/page/${Math.floor(rand() * 2000)}`,
      referrer: 'google.com',
      source: `source-${Math.floor(rand() * 300)}`,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
      utm_content: null,
      utm_term: null,
      country: `C${Math.floor(rand() * 120)}`,
      region: null,
      city: null,
      browser: 'Chrome',
      os: 'Windows',
      device: 'desktop',
      props: null,
    });
    if (batch.length === 5000) await writeBatch(setup, batch.splice(0));
  }
  if (batch.length) await writeBatch(setup, batch.splice(0));
  figure('dashboard events', perDay * 30, 'events');
}

async function dashboard(server: BenchServer, apiKey: string, dashboardId: string) {
  const dash = { id: dashboardId };

  const queries = {
    'dashboard 30d aggregate': 'period=30d&metrics=visitors,pageviews,visits,bounce_rate,visit_duration&compare=previous_period',
    'dashboard 30d time series': 'period=30d&metrics=visitors,pageviews&dimension=time:day',
    'dashboard 30d top pages': 'period=30d&metrics=visitors,pageviews&dimension=event:page&limit=10',
    'dashboard 30d top sources': 'period=30d&metrics=visitors,bounce_rate&dimension=visit:source&limit=10',
    // The panel's other first tabs (ui/panel/src/analytics/Breakdowns.tsx) and the entry and exit pages.
    'dashboard 30d entry pages': 'period=30d&metrics=visitors&dimension=visit:entry_page&limit=10',
    'dashboard 30d exit pages': 'period=30d&metrics=visitors&dimension=visit:exit_page&limit=10',
    'dashboard 30d countries': 'period=30d&metrics=visitors&dimension=visit:country&limit=10',
    'dashboard 30d devices': 'period=30d&metrics=visitors&dimension=visit:device&limit=10',
    'dashboard 30d events': `period=30d&metrics=events&dimension=event:name&limit=10&filters=${encodeURIComponent('event:name!=pageview')}`,
    'dashboard 30d browsers': 'period=30d&metrics=visitors&dimension=visit:browser&limit=10',
    'dashboard 30d operating systems': 'period=30d&metrics=visitors&dimension=visit:os&limit=10',
  };
  for (const [name, q] of Object.entries(queries)) {
    const times: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/analytics/stats?property_id=${dash.id}&${q}`, { headers: { authorization: `Bearer ${apiKey}` } });
      await res.text();
      if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    figure(`${name} p50`, percentile(times, 0.5), 'ms');
    figure(`${name} p99`, percentile(times, 0.99), 'ms');
  }
  figure('load average (1 min)', os.loadavg()[0]);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
