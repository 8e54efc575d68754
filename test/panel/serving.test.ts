// The panel is served by the API's own listener: index.html for panel paths with strict headers,
// hashed assets cached forever, and the API's JSON answers untouched.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('panel serving', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.stop());

  test('panel paths answer index.html with a strict CSP and no framing', async () => {
    for (const p of ['/', '/sign-in', '/conversations', '/conversations/cv_123?view=mine', '/inboxes/inb_1/cv_2', '/settings/webhooks/wh_1']) {
      const res = await fetch(s.url + p);
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      const html = await res.text();
      assert.match(html, /<div id="app"><\/div>/);
      assert.doesNotMatch(html, /<script>(?!<)/, 'no inline script');
    }
  });

  test('the service worker is at /sw.js (scope /), not cached for long, and shows pushes', async () => {
    const res = await fetch(`${s.url}/sw.js`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const body = await res.text();
    assert.match(body, /addEventListener\('push'/);
    assert.match(body, /showNotification/);
    assert.match(body, /notificationclick/);
  });

  test('hashed assets are immutable; everything they need is served by svc itself', async () => {
    const html = await (await fetch(s.url + '/')).text();
    // The web app manifest is found by its name (not hashed, not cached for long), like /sw.js…
    assert.ok(html.includes('href="/manifest.webmanifest"'));
    const manifest = await fetch(`${s.url}/manifest.webmanifest`);
    assert.equal(manifest.status, 200);
    assert.equal(manifest.headers.get('cache-control'), 'no-cache');
    assert.match(manifest.headers.get('content-type') ?? '', /^application\/manifest\+json/);
    const all = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    // …and so are the app's icons (served by svc, cached for a day).
    for (const icon of all.filter((ref) => ref.startsWith('/icons/'))) {
      const res = await fetch(s.url + icon);
      assert.equal(res.status, 200, icon);
      assert.equal(res.headers.get('content-type'), 'image/png', icon);
    }
    const refs = all.filter((ref) => ref !== '/manifest.webmanifest' && !ref.startsWith('/icons/'));
    assert.ok(refs.length >= 2);
    for (const ref of refs) {
      assert.match(ref, /^\/assets\/[A-Za-z0-9_-]+-[A-Za-z0-9_-]{8}\.(js|css)$/, `same origin, hashed: ${ref}`);
      const res = await fetch(s.url + ref);
      assert.equal(res.status, 200, ref);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(res.headers.get('content-type') ?? '', ref.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      const body = await res.text();
      // Fonts, images and imports from elsewhere would show up here (the browser test also checks
      // that every request the page makes goes to svc).
      if (ref.endsWith('.css')) assert.ok(!/url\(\s*['"]?(https?:)?\/\//i.test(body), `no outside url() in ${ref}`);
      else assert.ok(!/\bimport\s*\(?\s*['"`]https?:/i.test(body), `no outside imports in ${ref}`);
    }
  });

  test('unknown assets, traversal and API paths never fall back to the panel', async () => {
    for (const p of ['/assets/nope-12345678.js', '/assets/..%2f..%2fpackage.json', '/assets/x.exe']) {
      const res = await fetch(s.url + p);
      assert.equal(res.status, 404, p);
      assert.equal((await res.json()).error.code, 'not_found');
    }
    for (const p of ['/v1/nope', '/v1', '/metrics', '/widget/nope', '/widget.json']) {
      const res = await fetch(s.url + p);
      assert.equal(res.status, 404, p);
      assert.match(res.headers.get('content-type') ?? '', /application\/json/, p);
    }
    const health = await fetch(s.url + '/healthz');
    assert.equal((await health.json()).status, 'ok');
  });

  test('the build wrote the panel next to the server', () => {
    assert.ok(fs.existsSync(path.resolve('dist/ui/panel/index.html')), 'npm run build builds the panel');
  });
});
