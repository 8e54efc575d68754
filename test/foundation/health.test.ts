import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer, tempDir } from '../helpers/server.js';

describe('health, version, metrics, logs', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  test('GET /healthz answers ok without the database', async () => {
    const r = await s.request('GET', '/healthz');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'ok' });
  });

  test('GET /readyz answers 200 while the database answers', async () => {
    const r = await s.request('GET', '/readyz');
    assert.equal(r.status, 200);
  });

  test('GET /v1/version gives the package version', async () => {
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
    const r = await s.request('GET', '/v1/version');
    assert.deepEqual(r.body, { version: pkg.version });
  });

  test('GET /v1/openapi.json describes the routes', async () => {
    const r = await s.request('GET', '/v1/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.1.0');
    assert.ok(r.body.paths['/v1/workspace'].patch);
    assert.ok(r.body.paths['/v1/api-keys'].post);
  });

  test('metrics are labelled by route pattern, never the raw path, and pass promtool', async () => {
    const seed = await seedWorkspace(s.app);
    await s.request('GET', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey });
    await s.request('GET', `/v1/inboxes/${seed.inboxId}`, { token: seed.apiKey });
    await s.request('GET', '/v1/inboxes/inb_doesnotexist', { token: seed.apiKey });
    await s.request('GET', '/v1/no/such/thing/12345');
    // A panel path answers the app's index.html: counted without its raw path too.
    await s.request('GET', '/conversations/cv_panelpath');
    const text = await (await fetch(s.metricsUrl)).text();
    // The same series again adds to its count (each series is looked up once and kept).
    assert.match(text, /svc_http_requests_total\{method="GET",route="\/v1\/inboxes\/:inboxId",status="200"\} 2/);
    assert.match(text, /svc_http_request_seconds_count\{method="GET",route="\/v1\/inboxes\/:inboxId",status="200"\} 2/);
    assert.match(text, /svc_http_requests_total\{method="GET",route="\/v1\/inboxes\/:inboxId",status="404"\} 1/);
    assert.match(text, /svc_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    assert.match(text, /svc_http_requests_total\{method="GET",route="unmatched",status="200"\} 1/);
    assert.doesNotMatch(text, /inb_|cv_panelpath|such\/thing/);
    assert.match(text, /svc_http_request_seconds_bucket\{/);
    assert.match(text, /process_resident_memory_bytes/);
    assert.match(text, /nodejs_eventloop_lag_seconds/);
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p));
    if (!promtool) {
      if (process.env.CI) assert.fail('promtool is missing in CI');
      return;
    }
    const file = path.join(tempDir(), 'metrics.txt');
    fs.writeFileSync(file, text);
    execFileSync('sh', ['-c', `${promtool} check metrics < ${file}`], { stdio: 'pipe' });
  });

  test('one JSON log line per request with method, route, status, duration and request id', async () => {
    const before = s.logs.length;
    const r = await s.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(r.headers.get('x-request-id'), 'abc-123');
    const lines = s.logs.slice(before).filter((l) => l.msg === 'request');
    assert.equal(lines.length, 1);
    const line = lines[0];
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/healthz');
    assert.equal(line.status, 200);
    assert.equal(typeof line.duration_ms, 'number');
    assert.equal(line.request_id, 'abc-123');
    assert.equal(typeof line.time, 'string');
  });

  test('every answer carries one request id (JSON, error, not found, panel page), the one its log line names', async () => {
    for (const [urlPath, status] of [
      ['/healthz', 200],
      ['/v1/workspace', 401],
      ['/v1/no/such/route', 404],
      ['/conversations/cv_panelpath', 200],
    ] as const) {
      const before = s.logs.length;
      const r = await s.request('GET', urlPath);
      assert.equal(r.status, status, urlPath);
      const id = r.headers.get('x-request-id');
      assert.match(id ?? '', /^[A-Za-z0-9._-]{1,64}$/, `${urlPath}: one request id, not repeated`);
      assert.ok(
        s.logs.slice(before).some((l) => l.msg === 'request' && l.request_id === id),
        urlPath,
      );
    }
  });

  test('startup warns about the features that are off', () => {
    const warnings = s.logs.filter((l) => l.level === 'warn').map((l) => l.msg);
    assert.ok(warnings.includes('SVC_SMTP_HOST is not set'));
    assert.ok(warnings.includes('SVC_INGRESS_SECRET is not set'));
    assert.ok(warnings.includes('SVC_VAPID_PUBLIC_KEY is not set'));
  });

  test('secrets never reach the logs', async () => {
    const seed = await seedWorkspace(s.app);
    await s.request('GET', '/v1/workspace', { token: seed.apiKey });
    await s.request('GET', '/v1/workspace', { token: seed.ownerToken });
    const all = s.rawLogs.join('');
    assert.ok(!all.includes(seed.apiKey));
    assert.ok(!all.includes(seed.ownerToken));
  });

  test('GET /readyz answers 503 and logs "not ready" when the database is gone', async () => {
    const t = await startTestServer();
    try {
      await t.app.handle.close();
      const r = await t.request('GET', '/readyz');
      assert.equal(r.status, 503);
      assert.ok(t.logs.some((l) => l.msg === 'not ready'));
      const h = await t.request('GET', '/healthz');
      assert.equal(h.status, 200);
    } finally {
      await t.stop().catch(() => {});
    }
  });
});
