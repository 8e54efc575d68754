import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProperty } from '../../src/analytics/properties.js';
import { rollUp } from '../../src/analytics/reports.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp } from '../mcp/helpers.js';

const ua = (who: string) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ${who}`;

describe('/v1/analytics/stats and /v1/analytics/realtime', () => {
  let s: TestServer;
  let seed: Seed;
  let clock: ManualClock;
  let pid: string;
  let reader: string;

  async function hit(who: string, path: string, opts: { r?: string; n?: string; gpc?: boolean } = {}) {
    const body = { d: 'stats.example', u: `https://stats.example${path}`, r: opts.r ?? null, w: 1280, ...(opts.n ? { n: opts.n } : {}) };
    const headers: Record<string, string> = { origin: 'https://stats.example', 'user-agent': ua(who), 'content-type': 'text/plain' };
    if (opts.gpc) headers['sec-gpc'] = '1';
    const r = await s.request('POST', '/a/e', { raw: JSON.stringify(body), headers });
    assert.equal(r.headers.get('svc-analytics-dropped'), null);
  }
  const stats = async (query: string, token = reader) => s.request('GET', `/v1/analytics/stats?property_id=${pid}&${query}`, { token });

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    clock = s.clock as ManualClock;
    clock.set('2026-06-01T09:00:00Z');
    seed = await seedWorkspace(s.app);
    pid = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'stats.example' })).id;
    reader = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'reader', scopes: ['analytics:read'] })).secret;
    // Day 1: A reads two pages and signs up; B bounces; C (GPC) has no visitor hash.
    await hit('A', '/', { r: 'https://www.google.com/' });
    await hit('B', '/?utm_source=news');
    await hit('C', '/pricing', { gpc: true });
    clock.advance(5 * MINUTE);
    await hit('A', '/pricing');
    clock.advance(MINUTE);
    await hit('A', '/pricing', { n: 'Signup' });
    await ingestionOf(s.app).writer.flush();
    // Day 2: A again (another visitor: a new day's salt), and D direct.
    clock.set('2026-06-02T12:00:00Z');
    await hit('A', '/blog?ref=twitter');
    await hit('D', '/');
    await ingestionOf(s.app).writer.flush();
  });
  after(() => s.stop());

  const AGGREGATE = { visitors: 4, pageviews: 6, events: 7, visits: 4, bounce_rate: 75, visit_duration: 90, views_per_visit: 1.5 };
  const METRICS = Object.keys(AGGREGATE).join(',');
  const values = (results: Record<string, { value: number }>) => Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.value]));

  test('aggregate metrics over a period, each named as such', async () => {
    const r = await stats(`period=7d&metrics=${METRICS}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.period, { from: '2026-05-27', to: '2026-06-02' });
    assert.deepEqual(values(r.body.results), AGGREGATE);
    assert.equal(r.body.rolled_through, null);
  });

  test('breakdowns, time series, filters and the comparison with the previous period', async () => {
    const pages = await stats('period=7d&metrics=visitors,pageviews&dimension=event:page');
    assert.deepEqual(pages.body.results, [
      { page: '/', visitors: 3, pageviews: 3 },
      { page: '/blog', visitors: 1, pageviews: 1 },
      { page: '/pricing', visitors: 1, pageviews: 2 },
    ]);
    const sources = await stats('period=7d&metrics=visitors,bounce_rate&dimension=visit:source');
    assert.deepEqual(
      new Set(sources.body.results.map((x: { source: string | null; bounce_rate: number }) => `${x.source}:${x.bounce_rate}`)),
      new Set(['google.com:0', 'news:100', 'twitter:100', 'null:100']),
    );
    const names = await stats('period=7d&metrics=events&dimension=event:name');
    assert.deepEqual(names.body.results, [
      { name: 'pageview', events: 6 },
      { name: 'Signup', events: 1 },
    ]);
    const days = await stats('period=7d&metrics=visitors&dimension=time:day');
    assert.equal(days.body.results.length, 7);
    assert.deepEqual(days.body.results.slice(-2), [
      { date: '2026-06-01', visitors: 2 },
      { date: '2026-06-02', visitors: 2 },
    ]);
    assert.deepEqual(days.body.results[0], { date: '2026-05-27', visitors: 0 });
    const google = await stats(`period=7d&metrics=visitors,pageviews,events&filters=${encodeURIComponent('visit:source==google.com')}`);
    assert.deepEqual(values(google.body.results), { visitors: 1, pageviews: 2, events: 3 });
    const notHome = await stats(`period=7d&metrics=pageviews&filters=${encodeURIComponent('event:page!=/')}`);
    assert.deepEqual(values(notHome.body.results), { pageviews: 3 });
    const blogVisits = await stats(`period=7d&metrics=visits&filters=${encodeURIComponent('event:page==/blog|/nothing')}`);
    assert.deepEqual(values(blogVisits.body.results), { visits: 1 });
    const compared = await stats('period=day&metrics=visitors,pageviews&compare=previous_period');
    assert.deepEqual(compared.body.results, { visitors: { value: 2, change: 0 }, pageviews: { value: 2, change: -50 } });
    const custom = await stats('period=custom&from=2026-06-01&to=2026-06-01&metrics=pageviews');
    assert.deepEqual(values(custom.body.results), { pageviews: 4 });
  });

  test('realtime: visitors of the last 5 minutes', async () => {
    const now = await s.request('GET', `/v1/analytics/realtime?property_id=${pid}`, { token: reader });
    assert.equal(now.status, 200);
    assert.deepEqual(now.body, {
      property_id: pid,
      visitors: 2,
      pageviews: 2,
      pages: [
        { page: '/', visitors: 1 },
        { page: '/blog', visitors: 1 },
      ],
    });
    clock.advance(6 * MINUTE);
    const later = await s.request('GET', `/v1/analytics/realtime?property_id=${pid}`, { token: reader });
    assert.deepEqual(later.body, { property_id: pid, visitors: 0, pageviews: 0, pages: [] });
  });

  test('bad queries get 400; other workspaces’ properties 404; keys without analytics:read 403; agents read', async () => {
    for (const q of [
      'metrics=nope',
      'dimension=event:page&metrics=bounce_rate',
      'dimension=visit:shoe',
      'filters=event:page~x',
      'period=custom&from=2026-01-01',
      'period=custom&from=2026-02-30&to=2026-03-01',
      'period=custom&from=2024-01-01&to=2026-01-01',
      'period=year',
    ]) {
      const r = await stats(q);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const other = await seedWorkspace(s.app);
    const foreign = await createProperty(s.app, { workspaceId: other.workspaceId, domain: 'foreign.example' });
    assert.equal((await s.request('GET', `/v1/analytics/stats?property_id=${foreign.id}`, { token: reader })).status, 404);
    const noScope = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'c', scopes: ['conversations:read'] })).secret;
    assert.equal((await stats('period=7d', noScope)).status, 403);
    assert.equal((await s.request('GET', `/v1/analytics/realtime?property_id=${pid}`, { token: noScope })).status, 403);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await stats('period=7d', agent.token)).status, 200);
  });

  test('the MCP tools answer what the API answers', async () => {
    const mcp = await connectMcp(s, reader);
    try {
      const api = await stats(`period=7d&date=2026-06-02&metrics=${METRICS}`);
      const tool = await mcp.call('analytics_stats', { property_id: pid, period: '7d', date: '2026-06-02', metrics: METRICS });
      assert.equal(tool.isError, false, tool.text);
      assert.deepEqual(tool.body, api.body);
      const list = await mcp.call('list_analytics_properties');
      assert.deepEqual(
        list.body.data.map((p: { id: string }) => p.id),
        [pid],
      );
      const noScope = await connectMcp(s, (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'x', scopes: ['conversations:read'] })).secret);
      const refused = await noScope.call('analytics_realtime', { property_id: pid });
      assert.equal(refused.isError, true);
      assert.equal(refused.body.error.code, 'forbidden');
      await noScope.close();
    } finally {
      await mcp.close();
    }
  });

  test('finished days are served from the daily rollups (the raw rows may be gone)', async () => {
    clock.set('2026-06-03T02:00:00Z');
    const before = await stats(`period=custom&from=2026-06-01&to=2026-06-02&metrics=${METRICS}`);
    const pagesBefore = await stats('period=custom&from=2026-06-01&to=2026-06-02&metrics=visitors,pageviews&dimension=event:page');
    assert.equal(await rollUp(s.app), 3, 'June 1 and 2 for the property, June 2 for the foreign one');
    assert.equal(await rollUp(s.app), 0, 'nothing twice');
    await s.app.db.deleteFrom('analytics_events').where('property_id', '=', pid).execute();
    await s.app.db.deleteFrom('analytics_visits').where('property_id', '=', pid).execute();
    const after = await stats(`period=custom&from=2026-06-01&to=2026-06-02&metrics=${METRICS}`);
    assert.equal(after.body.rolled_through, '2026-06-02');
    assert.deepEqual(after.body.results, before.body.results);
    assert.deepEqual(values(after.body.results), AGGREGATE);
    const pagesAfter = await stats('period=custom&from=2026-06-01&to=2026-06-02&metrics=visitors,pageviews&dimension=event:page');
    assert.deepEqual(pagesAfter.body.results, pagesBefore.body.results);
    const filtered = await stats(`period=custom&from=2026-06-01&to=2026-06-02&metrics=pageviews&filters=${encodeURIComponent('event:page==/')}`);
    assert.equal(filtered.body.rolled_through, null, 'filters read raw rows');
  });
});
