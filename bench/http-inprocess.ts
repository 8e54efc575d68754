// bench/http-inprocess: the CPU of an authenticated GET /v1/workspace and of the bare hono handler
// (bench/bare-hono.ts's) inside one process, without the kernel's TCP: node's own HTTP parser and
// response objects on an in-memory socket, the requests pipelined 50 at a time. The two alternate in
// rounds, so a machine whose speed drifts moves both; the median of each is printed, then their
// ratio. Steadier than bench/http on a shared machine, and it counts only the JS and SQLite work
// (no system call but SQLite's own).
//   npm run build && node dist/bench/http-inprocess.js [requests per round] [rounds]
import type http from 'node:http';
import { Duplex } from 'node:stream';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { loadConfig } from '../src/config.js';
import { buildServices } from '../src/context.js';
import { API_SERVER_OPTIONS } from '../src/http/response.js';
import { createLogger } from '../src/platform/log.js';
import { createServerApp } from '../src/server/routes.js';
import { applyMigrations } from '../src/server/serve.js';
import { figure, seededEnv } from './lib.js';

const PER_ROUND = Math.min(Number(process.argv[2] ?? 20_000), 200_000);
const ROUNDS = Math.min(Number(process.argv[3] ?? 7), 50);
const PIPELINED = 50;

/** A socket in memory: requests are pushed in, and each answer written counts one. */
class MemorySocket extends Duplex {
  answered = 0;
  remoteAddress = '127.0.0.1';
  remotePort = 40_000;
  override _read() {}
  override _write(_chunk: unknown, _encoding: string, done: () => void) {
    this.answered++;
    done();
  }
  override _writev(_chunks: unknown[], done: () => void) {
    this.answered++;
    done();
  }
  setNoDelay() {
    return this;
  }
  setKeepAlive() {
    return this;
  }
  setTimeout() {
    return this;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
}

/** CPU microseconds per request for `count` requests on a fresh connection to `server`. */
async function cpuPerRequest(server: http.Server, request: Buffer, count: number): Promise<number> {
  const socket = new MemorySocket();
  server.emit('connection', socket);
  const before = process.cpuUsage();
  for (let sent = 0; sent < count; ) {
    const burst = Math.min(PIPELINED, count - sent);
    for (let i = 0; i < burst; i++) socket.push(request);
    sent += burst;
    while (socket.answered < sent) await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(before);
  socket.destroy();
  return (used.user + used.system) / count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const { te, apiKey } = await seededEnv();
const app = buildServices(loadConfig(te.env), { log: createLogger({ level: 'info' }) });
try {
  await applyMigrations(app, true);
  const svc = createAdaptorServer({ fetch: createServerApp(app).fetch, serverOptions: API_SERVER_OPTIONS }) as http.Server;
  const bare = new Hono();
  bare.get('/', (c) => c.json({ id: 'ws_bench', name: 'Bench', retention_days: null }));
  const hono = createAdaptorServer({ fetch: bare.fetch }) as http.Server;
  const svcRequest = Buffer.from(`GET /v1/workspace HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
  const honoRequest = Buffer.from('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  // Warm-up: the JIT and the caches settle before anything is counted.
  await cpuPerRequest(svc, svcRequest, PER_ROUND);
  await cpuPerRequest(hono, honoRequest, PER_ROUND);
  const ours: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    ours.push(await cpuPerRequest(svc, svcRequest, PER_ROUND));
    floor.push(await cpuPerRequest(hono, honoRequest, PER_ROUND));
  }
  figure('bare_hono_inprocess_cpu_per_request', median(floor), 'us');
  figure('svc_get_workspace_inprocess_cpu_per_request', median(ours), 'us');
  figure(
    'rounds',
    `${ROUNDS} of ${PER_ROUND} requests each (svc ${ours.map((v) => v.toFixed(1)).join(' ')}; hono ${floor.map((v) => v.toFixed(1)).join(' ')})`,
  );
  figure('ratio', median(floor) / median(ours));
} finally {
  await app.close();
  await te.cleanup();
}
