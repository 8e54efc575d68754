// The request metrics (svc_http_requests_total, svc_http_request_seconds) are counted by
// SeriesCounter and SeriesHistogram (src/platform/metrics.ts) instead of prom-client's Counter and
// Histogram: what /metrics shows must be exactly what prom-client's own would show for the same
// observations, in its text format and its JSON, after a reset too.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../src/platform/metrics.js';

const LABELS = ['method', 'route', 'status'] as const;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function pair() {
  const ours = new Registry();
  const theirs = new Registry();
  return {
    ours,
    theirs,
    counter: new SeriesCounter('t_requests_total', 'Requests.', LABELS, ours),
    histogram: new SeriesHistogram('t_request_seconds', 'Seconds.', LABELS, BUCKETS, ours),
    promCounter: new Counter({ name: 't_requests_total', help: 'Requests.', labelNames: LABELS, registers: [theirs] }),
    promHistogram: new Histogram({ name: 't_request_seconds', help: 'Seconds.', labelNames: LABELS, buckets: BUCKETS, registers: [theirs] }),
  };
}

describe('request metrics', () => {
  test('the same observations give the same /metrics text and JSON as prom-client’s Counter and Histogram', async () => {
    const m = pair();
    const observations: [string, string, string, number][] = [
      ['GET', '/v1/workspace', '200', 0.0004],
      ['GET', '/v1/workspace', '200', 0.005],
      ['GET', '/v1/workspace', '200', 0.0051],
      ['GET', '/v1/inboxes/:inboxId', '404', 2.5],
      ['POST', '/v1/inboxes', '201', 11],
      ['GET', 'unmatched', '404', 0.3],
      ['GET', '/v1/workspace', '200', 0],
    ];
    for (const [method, route, status, seconds] of observations) {
      m.counter.labels(method, route, status).inc();
      m.histogram.labels(method, route, status).observe(seconds);
      m.promCounter.labels(method, route, status).inc();
      m.promHistogram.labels(method, route, status).observe(seconds);
    }
    m.counter.labels('GET', 'unmatched', '404').inc(3);
    m.promCounter.labels('GET', 'unmatched', '404').inc(3);
    assert.equal(await m.ours.metrics(), await m.theirs.metrics());
    assert.deepEqual(await m.ours.getMetricsAsJSON(), await m.theirs.getMetricsAsJSON());
    assert.match(await m.ours.metrics(), /t_request_seconds_bucket\{le="0.005",method="GET",route="\/v1\/workspace",status="200"\} 3\n/);
  });

  test('a series taken before a reset counts from zero after it, as prom-client’s does', async () => {
    const m = pair();
    const kept = { count: m.counter.labels('GET', '/a', '200'), seconds: m.histogram.labels('GET', '/a', '200') };
    const promKept = { count: m.promCounter.labels('GET', '/a', '200'), seconds: m.promHistogram.labels('GET', '/a', '200') };
    for (let i = 0; i < 3; i++) {
      kept.count.inc();
      kept.seconds.observe(0.02);
      promKept.count.inc();
      promKept.seconds.observe(0.02);
    }
    m.ours.resetMetrics();
    m.theirs.resetMetrics();
    assert.equal(await m.ours.metrics(), await m.theirs.metrics());
    kept.count.inc();
    kept.seconds.observe(0.7);
    promKept.count.inc();
    promKept.seconds.observe(0.7);
    assert.equal(await m.ours.metrics(), await m.theirs.metrics());
    assert.match(await m.ours.metrics(), /t_requests_total\{method="GET",route="\/a",status="200"\} 1\n/);
  });

  test('bad values are refused as prom-client refuses them', () => {
    const m = pair();
    assert.throws(() => m.histogram.labels('GET', '/a', '200').observe(Number.NaN), TypeError);
    assert.throws(() => m.counter.labels('GET', '/a', '200').inc(-1));
    assert.throws(() => m.counter.labels('GET', '/a'));
  });
});
