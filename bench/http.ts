// bench/http: authenticated GET /v1/workspace requests/s with 50 connections for 10 s, next to a
// bare hono JSON handler on @hono/node-server in the same run. Goal: ratio >= 0.5. Each server
// first gets the same load for a warm-up (a fifth of the time, at least 2 s) that is not counted:
// the JIT, lazily loaded modules and caches settle before the measured run.
//   node dist/bench/http.js [seconds] [--processes 2]
// On Postgres with SVC_BENCH_DATABASE_URL=postgres://… (as bench/webhooks; SVC_TEST_DATABASE_URL
// works too): each run makes a fresh database on that server. --processes 2 (Postgres only) then
// also runs two servers on the same database, the connections split over both as a load balancer
// would, and prints the two-process figures.
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';

const databaseUrl = process.env.SVC_BENCH_DATABASE_URL ?? process.env.SVC_TEST_DATABASE_URL;
// The test helpers behind lib.js read SVC_TEST_DATABASE_URL when they load, so it is set first.
if (databaseUrl) process.env.SVC_TEST_DATABASE_URL = databaseUrl;
const { benchDir, cpuSeconds, figure, seededEnv, startBenchServer } = await import('./lib.js');

const args = process.argv.slice(2);
const processesFlag = args.indexOf('--processes');
const processes = processesFlag >= 0 ? Number(args[processesFlag + 1]) : 1;
const seconds = Number(args.find((a, i) => /^\d+$/.test(a) && (processesFlag < 0 || i !== processesFlag + 1)) ?? 10);
if (!(processes >= 1 && processes <= 8)) throw new Error('--processes takes 1 to 8');
if (processes > 1 && !databaseUrl) throw new Error('--processes needs Postgres: set SVC_BENCH_DATABASE_URL');
const warmUpSeconds = Math.max(2, seconds / 5);
const connections = 50;

async function load(url: string, headers: Record<string, string> = {}, conns = connections) {
  await autocannon({ url, connections: conns, duration: warmUpSeconds, headers });
  const result = await autocannon({ url, connections: conns, duration: seconds, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

/**
 * load(), with the server's CPU time per answered request (user + system, from /proc): on a shared
 * machine that figure moves less than requests per second do.
 */
async function loadWithCpu(url: string, pid: number, headers: Record<string, string> = {}) {
  await autocannon({ url, connections, duration: warmUpSeconds, headers });
  const cpuBefore = cpuSeconds(pid);
  const result = await autocannon({ url, connections, duration: seconds, headers });
  const cpuUsPerRequest = ((cpuSeconds(pid) - cpuBefore) * 1e6) / result.requests.total;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { result, cpuUsPerRequest };
}

async function bareHono(): Promise<{ url: string; pid: number; stop(): void }> {
  const child = spawn(process.execPath, [path.join(benchDir, 'bare-hono.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { url: `http://127.0.0.1:${port}/`, pid: child.pid!, stop: () => child.kill() };
}

const bare = await bareHono();
const { result: floor, cpuUsPerRequest: floorCpu } = await loadWithCpu(bare.url, bare.pid);
bare.stop();

const { te, apiKey } = await seededEnv();
const server = await startBenchServer(te.env);
const { result: ours, cpuUsPerRequest: oursCpu } = await loadWithCpu(`${server.url}/v1/workspace`, server.child.pid!, { authorization: `Bearer ${apiKey}` });
const rss = server.rssMb();
await server.stop();

// The same load split over several servers on one database (each its own autocannon share).
let several: { requests: number; p99: number; rss: number } | undefined;
if (processes > 1) {
  const servers = [];
  for (let i = 0; i < processes; i++) servers.push(await startBenchServer(te.env));
  const shares = await Promise.all(
    servers.map((s, i) =>
      load(`${s.url}/v1/workspace`, { authorization: `Bearer ${apiKey}` }, Math.floor(connections / processes) + (i < connections % processes ? 1 : 0)),
    ),
  );
  several = {
    requests: shares.reduce((sum, r) => sum + r.requests.average, 0),
    p99: Math.max(...shares.map((r) => r.latency.p99)),
    rss: servers.reduce((sum, s) => sum + s.rssMb(), 0),
  };
  for (const s of servers) await s.stop();
}
await te.cleanup();

figure('bare_hono_requests_per_second', floor.requests.average, 'req/s');
figure('svc_get_workspace_requests_per_second', ours.requests.average, 'req/s');
figure('svc_get_workspace_p99_latency', ours.latency.p99, 'ms');
figure('bare_hono_cpu_per_request', floorCpu, 'us');
figure('svc_get_workspace_cpu_per_request', oursCpu, 'us');
figure('cpu_ratio', floorCpu / oursCpu);
figure('svc_rss_after_load', rss, 'MB');
figure('ratio', ours.requests.average / floor.requests.average);
if (several) {
  figure(`svc_get_workspace_requests_per_second_${processes}_processes`, several.requests, 'req/s');
  figure(`svc_get_workspace_p99_latency_${processes}_processes`, several.p99, 'ms');
  figure(`svc_rss_after_load_${processes}_processes`, several.rss, 'MB');
  figure(`speedup_${processes}_processes`, several.requests / ours.requests.average);
  figure(`ratio_${processes}_processes`, several.requests / floor.requests.average);
}
