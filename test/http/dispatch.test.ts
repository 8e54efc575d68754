// The app's inline dispatch (src/http/dispatch.ts): hono's compose and dispatch, answering at once
// when no layer awaits. Each case runs on two copies of one app, hono's own fetch and the inline
// one, and the answers must be the same; the real app answers a cached key's GET /v1/workspace at
// once on SQLite (so @hono/node-server writes it from node's parser callback).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Hono, type MiddlewareHandler } from 'hono';
import { dispatchInline } from '../../src/http/dispatch.js';
import { createServerApp } from '../../src/server/routes.js';
import { postgresUrl } from '../helpers/db.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Env = { Variables: { seen: string[] } };

/** One app: an outer middleware that records what it saw around `next`, and routes of every kind. */
function buildApp(inline: boolean) {
  const app = new Hono<Env>();
  const onError = (err: Error, c: { json: (b: unknown, s: 500) => Response }) => c.json({ error: err.message }, 500);
  const notFound = (c: { json: (b: unknown, s: 404) => Response }) => c.json({ error: 'none' }, 404);
  // Synchronous when what it wraps is (as the API's request middleware).
  const outer = (c: Parameters<MiddlewareHandler<Env>>[0], next: () => unknown) => {
    c.set('seen', ['outer']);
    const saw = () => c.header('x-outer-saw', String(c.res.status));
    const done = next();
    if (done instanceof Promise) return done.then(saw);
    saw();
  };
  app.use('*', outer as MiddlewareHandler<Env>);
  app.use('/async/*', async (c, next) => {
    await Promise.resolve();
    c.get('seen').push(`async-mw ${c.req.routeIndex}`);
    await next();
  });
  app.get('/sync/:id', (c) => c.json({ id: c.req.param('id'), seen: c.get('seen'), route: c.req.routePath }));
  app.get('/async/:id', async (c) => {
    await Promise.resolve();
    return c.json({ id: c.req.param('id'), seen: c.get('seen'), route: c.req.routePath });
  });
  app.get('/throws', () => {
    throw new Error('thrown at once');
  });
  app.get('/async/throws/now', async () => {
    await Promise.resolve();
    throw new Error('thrown later');
  });
  app.get(
    '/short',
    (c) => c.text('short-circuit', 202),
    (c) => c.text('never', 200),
  );
  app.get('/twice', async (_c, next) => {
    await next();
    await next();
  });
  app.get('/nothing', () => undefined as unknown as Response);
  app.onError(onError);
  app.notFound(notFound);
  if (inline) dispatchInline(app, { onError, notFound });
  return app;
}

const hono = buildApp(false);
const inline = buildApp(true);

async function answer(res: Response | Promise<Response>) {
  const r = await res;
  return { status: r.status, outer: r.headers.get('x-outer-saw'), type: r.headers.get('content-type'), body: await r.text() };
}

describe('inline dispatch', () => {
  for (const [method, path] of [
    ['GET', '/sync/a1'],
    ['GET', '/async/b2'],
    ['GET', '/throws'],
    ['GET', '/async/throws/now'],
    ['GET', '/short'],
    ['GET', '/twice'],
    ['GET', '/nothing'],
    ['GET', '/no/such/route'],
    ['POST', '/sync/a1'],
    ['HEAD', '/sync/a1'],
    ['HEAD', '/async/b2'],
  ]) {
    test(`${method} ${path}: the same answer as hono's own dispatch`, async () => {
      const request = () => new Request(`http://svc.test${path}`, { method });
      const expected = await answer(hono.fetch(request()));
      assert.deepEqual(await answer(inline.fetch(request())), expected);
    });
  }

  test('an answer no layer awaited is given at once, one that waited is a promise', async () => {
    const now = inline.fetch(new Request('http://svc.test/sync/a1'));
    assert.ok(now instanceof Response, 'answered at once');
    assert.deepEqual(JSON.parse(await now.text()), { id: 'a1', seen: ['outer'], route: '/sync/:id' });
    assert.equal(now.headers.get('x-outer-saw'), '200');
    const later = inline.fetch(new Request('http://svc.test/async/b2'));
    assert.ok(later instanceof Promise);
    assert.deepEqual(JSON.parse(await (await later).text()), { id: 'b2', seen: ['outer', 'async-mw 1'], route: '/async/:id' });
    // An error thrown at once is the error handler's answer at once, and the outer layer saw it.
    const thrown = inline.fetch(new Request('http://svc.test/throws'));
    assert.ok(thrown instanceof Response);
    assert.equal(thrown.status, 500);
    assert.equal(thrown.headers.get('x-outer-saw'), '500');
  });
});

describe('the API answers a cached key at once', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    s.app.jobs.stop();
  });
  after(() => s?.stop());

  test('GET /v1/workspace with a cached API key: a Response, not a promise, on SQLite; the same answer on Postgres', async () => {
    const seed = await seedWorkspace(s.app);
    const api = createServerApp(s.app);
    const ask = (token?: string) => api.fetch(new Request('http://svc.test/v1/workspace', { headers: token ? { authorization: `Bearer ${token}` } : {} }));
    // The first request reads the key's row (awaited); the next ones find it cached.
    const first = await ask(seed.apiKey);
    assert.equal(first.status, 200);
    const cached = ask(seed.apiKey);
    if (!postgresUrl) assert.ok(cached instanceof Response, 'a cached key on SQLite is answered without a promise');
    const res = await cached;
    assert.equal(res.status, 200);
    assert.equal((await res.json()).id, seed.workspaceId);
    assert.match(res.headers.get('x-request-id') ?? '', /^[A-Za-z0-9._-]+$/);
    // Refusals keep their shape.
    const refused = await ask();
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, 'unauthorized');
    const line = [...s.logs].reverse().find((l) => l.msg === 'request' && l.route === '/v1/workspace' && l.status === 401);
    assert.ok(line, 'the refusal was logged');
  });
});
