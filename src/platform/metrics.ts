import http from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ListenAddress } from '../config.js';

export interface Metrics {
  registry: Registry;
  httpRequests: SeriesCounter<'method' | 'route' | 'status'>;
  httpSeconds: SeriesHistogram<'method' | 'route' | 'status'>;
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
  /** Analytics events dropped at ingestion, by reason: bot, quota, origin, rate, invalid, backlog. */
  analyticsDropped: Counter<'reason'>;
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
  const httpRequests = new SeriesCounter(
    'svc_http_requests_total',
    'HTTP requests answered, by method, route pattern and status.',
    ['method', 'route', 'status'] as const,
    registry,
  );
  const httpSeconds = new SeriesHistogram(
    'svc_http_request_seconds',
    'Time to answer HTTP requests, by method, route pattern and status.',
    ['method', 'route', 'status'] as const,
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registry,
  );
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
  const analyticsDropped = counter(
    'svc_analytics_events_dropped_total',
    'Analytics events dropped at ingestion, by reason: bot, quota, origin, rate, invalid, backlog.',
    ['reason'] as const,
  );
  for (const reason of ['bot', 'quota', 'origin', 'rate', 'invalid', 'backlog']) analyticsDropped.inc({ reason }, 0);
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
    analyticsDropped,
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

// The request metrics are counted per request: prom-client's own inc and observe validate and hash
// the labels on every call, even on a series taken with labels() (~1.6 µs per request, ~7 % of an
// authenticated GET in-process). These keep each series as a plain object found once by its label
// values and counted in place; the registry formats what get() answers exactly as prom-client's
// Counter and Histogram answer it, so /metrics shows the same lines.

type Labels<L extends string> = Record<L, string>;

/** What prom-client's registry reads from a metric (its Counter's and Histogram's get()). */
interface MetricAnswer {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: { labels: object; value: number; metricName?: string; sharedLabels?: object; exemplar?: null | undefined }[];
  aggregator: 'sum';
}

abstract class Series<L extends string, S extends { labels: Labels<L>; live: boolean }> {
  protected readonly series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  protected abstract create(labels: Labels<L>): S;

  protected seriesOf(values: string[]): S {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${this.labelNames.length} label values expected`);
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const labels = {} as Labels<L>;
      this.labelNames.forEach((name, i) => {
        labels[name] = values[i];
      });
      s = this.create(labels);
      this.series.set(key, s);
    }
    return s;
  }

  /** A series handed out before a reset counts from zero again and shows up once it does. */
  protected revive(s: S): void {
    s.live = true;
    this.series.set(this.labelNames.map((name) => s.labels[name]).join('\u0000'), s);
  }

  reset(): void {
    for (const s of this.series.values()) s.live = false;
    this.series.clear();
  }
}

interface CounterSeries<L extends string> {
  labels: Labels<L>;
  live: boolean;
  value: number;
  inc(by?: number): void;
}

/** A counter by labels, counted in plain JS (see above). */
export class SeriesCounter<L extends string> extends Series<L, CounterSeries<L>> {
  /** The series of these label values (in labelNames' order), to count on. */
  labels(...values: string[]): { inc(by?: number): void } {
    return this.seriesOf(values);
  }

  protected create(labels: Labels<L>): CounterSeries<L> {
    const owner = this;
    return {
      labels,
      live: true,
      value: 0,
      inc(by = 1) {
        if (!(by >= 0) || !Number.isFinite(by)) throw new Error('It is not possible to decrease a counter');
        if (!this.live) {
          this.value = 0;
          owner.revive(this);
        }
        this.value += by;
      },
    };
  }

  async get(): Promise<MetricAnswer> {
    return {
      name: this.name,
      help: this.help,
      type: 'counter',
      values: [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value })),
      aggregator: 'sum',
    };
  }
}

interface HistogramSeries<L extends string> {
  labels: Labels<L>;
  live: boolean;
  /** Observations per bucket (not cumulative); those above every bound are only in count. */
  buckets: Float64Array;
  sum: number;
  count: number;
  observe(value: number): void;
}

/** A histogram by labels, counted in plain JS (see above). */
export class SeriesHistogram<L extends string> extends Series<L, HistogramSeries<L>> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly L[],
    readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  /** The series of these label values (in labelNames' order), to observe on. */
  labels(...values: string[]): { observe(value: number): void } {
    return this.seriesOf(values);
  }

  protected create(labels: Labels<L>): HistogramSeries<L> {
    const owner = this;
    const bounds = this.upperBounds;
    return {
      labels,
      live: true,
      buckets: new Float64Array(bounds.length),
      sum: 0,
      count: 0,
      observe(value: number) {
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
        if (!this.live) {
          this.buckets.fill(0);
          this.sum = 0;
          this.count = 0;
          owner.revive(this);
        }
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]) {
            this.buckets[i]++;
            break;
          }
        }
        this.sum += value;
        this.count++;
      },
    };
  }

  /** As prom-client's Histogram: the series' labels beside `le`, not inside (the text format's order). */
  async getForPromString(): Promise<MetricAnswer> {
    const values: MetricAnswer['values'] = [];
    const bucketName = `${this.name}_bucket`;
    // As prom-client's Histogram: `le` in labels, the series' own labels as sharedLabels.
    const pair = (labels: object, value: number, metricName: string, sharedLabels: Labels<L>, exemplar: null | undefined) => ({
      labels,
      sharedLabels,
      value,
      metricName,
      exemplar,
    });
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, i) => {
        cumulative += s.buckets[i];
        values.push(pair({ le: bound }, cumulative, bucketName, s.labels, null));
      });
      values.push(pair({ le: '+Inf' }, s.count, bucketName, s.labels, null));
      values.push(pair({}, s.sum, `${this.name}_sum`, s.labels, undefined));
      values.push(pair({}, s.count, `${this.name}_count`, s.labels, undefined));
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }

  /** As prom-client's Histogram: the series' labels merged into each value's (JSON, cluster merges). */
  async get(): Promise<MetricAnswer> {
    const answer = await this.getForPromString();
    answer.values = answer.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return answer;
  }
}
