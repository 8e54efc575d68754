import http from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ListenAddress } from '../config.js';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpSeconds: Histogram<'method' | 'route' | 'status'>;
  /** Inbound mail per receiving inbox: via smtp, http or cli; result stored or duplicate. */
  mailReceived: Counter<'via' | 'result'>;
  /** Attempts to send a reply: sent, retried (failed, tried again later) or failed (given up). */
  mailSent: Counter<'outcome'>;
  /** Webhook deliveries settled by an attempt: succeeded, retried or failed (given up or endpoint disabled). */
  webhookDeliveries: Counter<'outcome'>;
  /** Open WebSockets of this process: team (GET /v1/realtime) and widget (GET /v1/widget/realtime). */
  realtimeConnections: Gauge<'kind'>;
  /** SMTP ingress connections accepted. */
  smtpSessions: Counter;
  /** SMTP ingress commands refused, by reason. */
  smtpRefusals: Counter<'reason'>;
  /** Messages the mailbox-migration copy stored. */
  migrationMessagesCopied: Counter;
  /** Broadcast recipients by outcome of an attempt: sent, retried or failed. */
  broadcastRecipients: Counter<'outcome'>;
  /** Broadcasts paused, by reason. */
  broadcastsPaused: Counter<'reason'>;
}

export interface GaugeReading<L extends string> {
  labels?: Partial<Record<L, string>>;
  value: number;
}

/**
 * A gauge computed when /metrics is scraped (prom-client's collect), for values that live in the
 * database and so are the same whichever process sharing it is asked. A failed read leaves the gauge
 * without values for that scrape (an absent series), never a failed scrape.
 */
export function databaseGauge<L extends string>(
  metrics: Metrics,
  opts: { name: string; help: string; labelNames?: readonly L[]; read: () => Promise<GaugeReading<L>[]> },
): Gauge<L> {
  return new Gauge<L>({
    name: opts.name,
    help: opts.help,
    labelNames: opts.labelNames ?? [],
    registers: [metrics.registry],
    async collect() {
      let readings: GaugeReading<L>[] = [];
      try {
        readings = await opts.read();
      } catch {
        readings = [];
      }
      this.reset();
      for (const r of readings) {
        if (r.labels) this.set(r.labels, r.value);
        else this.set(r.value);
      }
    },
  });
}

/** Seconds from an ISO time to now (0 when there is none, or it is in the future). */
export function ageSeconds(now: Date, since: string | null | undefined): number {
  if (!since) return 0;
  return Math.max(0, (now.getTime() - Date.parse(since)) / 1000);
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
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const mailSent = counter(
    'svc_mail_sent_total',
    'Reply send attempts, by outcome: sent, retried (failed, tried again later), failed (given up, message marked failed).',
    ['outcome'] as const,
  );
  const webhookDeliveries = counter(
    'svc_webhook_deliveries_total',
    'Webhook deliveries by the outcome of an attempt: succeeded, retried, failed (given up or its endpoint disabled).',
    ['outcome'] as const,
  );
  const realtimeConnections = new Gauge({
    name: 'svc_realtime_connections',
    help: 'Open WebSockets of this process, by kind: team (GET /v1/realtime) and widget (GET /v1/widget/realtime).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  for (const kind of ['team', 'widget']) realtimeConnections.set({ kind }, 0);
  const smtpSessions = counter('svc_smtp_sessions_total', 'SMTP ingress connections accepted.');
  const smtpRefusals = counter('svc_smtp_refusals_total', 'SMTP ingress commands refused, by reason.', ['reason'] as const);
  const migrationMessagesCopied = counter('svc_migration_messages_copied_total', 'Messages the mailbox-migration copy stored.');
  const broadcastRecipients = counter('svc_broadcast_recipients_total', 'Broadcast recipients by the outcome of an attempt: sent, retried, failed.', [
    'outcome',
  ] as const);
  const broadcastsPaused = counter(
    'svc_broadcasts_paused_total',
    'Broadcasts paused, by reason (manual, workspace_suspended, mailer_tenant, bounce_rate, complaint_rate, sender_error).',
    ['reason'] as const,
  );
  return {
    registry,
    httpRequests,
    httpSeconds,
    mailReceived,
    mailSent,
    webhookDeliveries,
    realtimeConnections,
    smtpSessions,
    smtpRefusals,
    migrationMessagesCopied,
    broadcastRecipients,
    broadcastsPaused,
  };
}

/** The separate metrics listener (SVC_METRICS_ADDR); only GET /metrics is served there. */
export async function startMetricsServer(metrics: Metrics, addr: ListenAddress): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      let body: string;
      try {
        body = await metrics.registry.metrics();
      } catch {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('metrics unavailable\n');
        return;
      }
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
