// /widget.js and its modules as a site loads them: content type, caching (a short-lived loader, hashed
// modules cached for good), cross-origin module headers, and the size budget of what loads before
// the visitor opens the chat.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { INITIAL_LOAD_BUDGET_BYTES, initialLoad } from '../helpers/widget-script.js';

describe('the widget script', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  test('the loader: JavaScript, a short cache, usable from any site', async () => {
    const res = await fetch(`${s.url}/widget.js`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const text = await res.text();
    assert.ok(text.length < 600, `the loader is ${text.length} bytes`);
    assert.match(text, /document\.currentScript/);
  });

  test('hashed modules are cached for good and readable cross-origin; other names are 404', async () => {
    const { files } = await initialLoad(s.url);
    const module = [...files.keys()].find((p) => p.startsWith('/widget/assets/'))!;
    const res = await fetch(`${s.url}${module}`, { headers: { origin: 'https://shop.example.com' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
    for (const bad of ['/widget/assets/nope.js', '/widget/assets/..%2Fwidget.js', '/widget/assets/manifest.json', '/widget/manifest.json']) {
      const r = await fetch(`${s.url}${bad}`);
      assert.equal(r.status, 404, bad);
      assert.equal((await r.json()).error.code, 'not_found');
    }
  });

  test(`what loads before the chat opens stays within ${INITIAL_LOAD_BUDGET_BYTES} bytes gzip; the chat panel loads on open`, async () => {
    const { gzipBytes, lazy } = await initialLoad(s.url);
    assert.ok(gzipBytes <= INITIAL_LOAD_BUDGET_BYTES, `initial load is ${gzipBytes} bytes gzip, over the ${INITIAL_LOAD_BUDGET_BYTES} budget`);
    assert.ok(lazy.length >= 1, 'the chat panel is a separate module loaded on open');
    for (const path of lazy) assert.equal((await fetch(`${s.url}${path}`)).status, 200, path);
  });
});
