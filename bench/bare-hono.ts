// The floor for bench/http: the smallest hono JSON handler on @hono/node-server.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/', (c) => c.json({ id: 'ws_bench', name: 'Bench', retention_days: null }));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
