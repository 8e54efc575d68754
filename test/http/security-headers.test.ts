import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HSTS_VALUE } from '../../src/http/app.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('security headers', () => {
  let s: TestServer;
  let seed: Seed;
  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('authenticated JSON answers are neither cached nor sniffed, errors included', async () => {
    for (const path of ['/v1/conversations', '/v1/workspace', '/v1/conversations/cv_missing']) {
      const r = await s.request('GET', path, { token: seed.apiKey });
      assert.match(r.headers.get('content-type') ?? '', /json/, path);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(r.headers.get('cache-control'), 'no-store', path);
    }
    const refused = await s.request('GET', '/v1/conversations');
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('cache-control'), 'no-store');
    // Without https there is no Strict-Transport-Security.
    assert.equal(refused.headers.get('strict-transport-security'), null);
  });

  test('a route’s own caching is kept (the panel’s page)', async () => {
    const res = await fetch(`${s.url}/`);
    await res.arrayBuffer();
    assert.equal(res.status, 200, 'the panel is built (npm run build)');
    assert.notEqual(res.headers.get('cache-control'), 'no-store');
  });

  test('the unsubscribe page has a CSP and cannot be framed', async () => {
    for (const token of ['abc123', 'not valid!']) {
      const res = await fetch(`${s.url}/v1/unsubscribe/${encodeURIComponent(token)}`);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/, token);
      assert.match(csp, /frame-ancestors 'none'/, token);
      assert.match(csp, /form-action 'self'/, token);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      await res.text();
    }
    const posted = await fetch(`${s.url}/v1/unsubscribe/abc123`, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
    assert.equal(posted.status, 404);
    assert.match(posted.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    await posted.text();
  });
});

describe('Strict-Transport-Security', () => {
  async function hstsOf(env: Record<string, string>) {
    const s = await startTestServer({ env });
    try {
      const api = await s.request('GET', '/v1/conversations');
      const panel = await fetch(`${s.url}/`);
      await panel.arrayBuffer();
      return [api.headers.get('strict-transport-security'), panel.headers.get('strict-transport-security')];
    } finally {
      await s.stop();
    }
  }

  test('sent on every answer with an https SVC_PUBLIC_URL', async () => {
    assert.deepEqual(await hstsOf({ SVC_PUBLIC_URL: 'https://help.example.com' }), [HSTS_VALUE, HSTS_VALUE]);
    assert.match(HSTS_VALUE, /^max-age=\d{7,}/);
  });

  test('SVC_HSTS=off leaves it to the proxy; an http address never sends it', async () => {
    assert.deepEqual(await hstsOf({ SVC_PUBLIC_URL: 'https://help.example.com', SVC_HSTS: 'off' }), [null, null]);
    assert.deepEqual(await hstsOf({ SVC_PUBLIC_URL: 'http://help.example.com' }), [null, null]);
  });
});
