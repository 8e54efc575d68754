import http from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { ListenAddress } from '../config.js';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpSeconds: Histogram<'method' | 'route' | 'status'>;
  /** Inbound mail per receiving inbox: via smtp, http or cli; result stored or duplicate. */
  mailReceived: Counter<'via' | 'result'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // These gauges end in _total, which promtool's lint refuses; nodejs_active_handles and
  // nodejs_active_requests and nodejs_active_resources (by type) carry the same numbers.
  registry.removeSingleMetric('nodejs_active_handles_total');
  registry.removeSingleMetric('nodejs_active_requests_total');
  registry.removeSingleMetric('nodejs_active_resources_total');
  const httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpSeconds = new Histogram({
    name: 'svc_http_request_seconds',
    help: 'Time to answer HTTP requests, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const mailReceived = new Counter({
    name: 'svc_mail_received_total',
    help: 'Inbound mail delivered to an inbox, by way in (smtp, http, cli) and result (stored, duplicate).',
    labelNames: ['via', 'result'] as const,
    registers: [registry],
  });
  return { registry, httpRequests, httpSeconds, mailReceived };
}

/** The separate metrics listener (SVC_METRICS_ADDR); only GET /metrics is served there. */
export async function startMetricsServer(metrics: Metrics, addr: ListenAddress): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      const body = await metrics.registry.metrics();
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      res.end(body);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(addr.port, addr.host, () => resolve());
  });
  return server;
}
