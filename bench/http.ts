// bench/http: authenticated GET /v1/workspace requests/s with 50 connections for 10 s, next to a
// bare hono JSON handler on @hono/node-server in the same run. Goal: ratio >= 0.5.
//   node dist/bench/http.js [seconds]
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchDir, figure, seededEnv, startBenchServer } from './lib.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = 50;

async function load(url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

async function bareHono(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [path.join(benchDir, 'bare-hono.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.kill() };
}

const bare = await bareHono();
const floor = await load(bare.url);
bare.stop();

const { te, apiKey } = await seededEnv();
const server = await startBenchServer(te.env);
const ours = await load(`${server.url}/v1/workspace`, { authorization: `Bearer ${apiKey}` });
const rss = server.rssMb();
await server.stop();
await te.cleanup();

figure('bare_hono_requests_per_second', floor.requests.average, 'req/s');
figure('svc_get_workspace_requests_per_second', ours.requests.average, 'req/s');
figure('svc_get_workspace_p99_latency', ours.latency.p99, 'ms');
figure('svc_rss_after_load', rss, 'MB');
figure('ratio', ours.requests.average / floor.requests.average);
