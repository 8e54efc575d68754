import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProperty } from '../../src/analytics/properties.js';
import { rollUp } from '../../src/analytics/reports.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { rawRows } from '../../src/analytics/stats.js';
import { type PendingEvent, writeBatch } from '../../src/analytics/writer.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ua = (who: string) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ${who}`;

// The days not yet rolled up are read from the writer's day totals (issue 39): they must answer
// what counting distinct visitors over the raw events answers.
describe('analytics: today’s visitors from the writer’s day totals', () => {
  let s: TestServer;
  let clock: ManualClock;
  let pid: string;
  let wid: string;
  let reader: string;

  async function hit(who: string, path: string, opts: { r?: string; n?: string; gpc?: boolean } = {}) {
    const body = { d: 'today.example', u: `https://today.example${path}`, r: opts.r ?? null, w: 1280, ...(opts.n ? { n: opts.n } : {}) };
    const headers: Record<string, string> = { origin: 'https://today.example', 'user-agent': ua(who), 'content-type': 'text/plain' };
    if (opts.gpc) headers['sec-gpc'] = '1';
    const r = await s.request('POST', '/a/e', { raw: JSON.stringify(body), headers });
    assert.equal(r.headers.get('svc-analytics-dropped'), null);
  }
  const flush = () => ingestionOf(s.app).writer.flush();
  const stats = async (query: string) => {
    const r = await s.request('GET', `/v1/analytics/stats?property_id=${pid}&${query}`, { token: reader });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const total = async (from: string, to: string, filters = '') =>
    (await stats(`period=custom&from=${from}&to=${to}&metrics=visitors,pageviews,events,visits${filters ? `&filters=${encodeURIComponent(filters)}` : ''}`))
      .results;
  /** The computation the dashboard made before: count(distinct visitor_id) over the raw events, per day. */
  const oldWay = async (from: string, to: string) =>
    Object.fromEntries(
      (await rawRows(s.app.db, pid, from, to, null, [])).map((r) => [
        r.day,
        { visitors: r.visitors, pageviews: r.pageviews, events: r.events, visits: r.visits },
      ]),
    );
  const series = async (from: string, to: string) =>
    Object.fromEntries(
      (await stats(`period=custom&from=${from}&to=${to}&metrics=visitors,pageviews,events,visits&dimension=time:day`)).results
        .filter((r: { events: number }) => r.events > 0)
        .map(({ date, ...rest }: { date: string }) => [date, rest]),
    );
  const kept = async (table: 'analytics_day_visitors' | 'analytics_day_totals') =>
    (await s.app.db.selectFrom(table).select('day').where('property_id', '=', pid).execute()).map((r) => r.day).sort();

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    clock = s.clock as ManualClock;
    clock.set('2026-07-01T08:00:00Z');
    const seed = await seedWorkspace(s.app);
    wid = seed.workspaceId;
    pid = (await createProperty(s.app, { workspaceId: wid, domain: 'today.example' })).id;
    reader = (await createApiKey(s.app, { workspaceId: wid, name: 'reader', scopes: ['analytics:read'] })).secret;
  });
  after(() => s.stop());

  test('one visitor with many events in several batches, two visitors, no-hash events, a day boundary, a filter', async () => {
    // July 1: A comes from google with 5 pageviews and an event over three batches (two visits), B once, C without a hash (GPC).
    await hit('A', '/', { r: 'https://www.google.com/' });
    await hit('A', '/pricing');
    await flush();
    clock.advance(2 * MINUTE);
    await hit('A', '/pricing', { n: 'Signup' });
    await hit('B', '/docs');
    await hit('C', '/', { gpc: true });
    await flush();
    clock.set('2026-07-01T23:59:00Z');
    await hit('A', '/', { r: 'https://www.google.com/' });
    await hit('A', '/blog');
    await hit('A', '/blog');
    await flush();
    // July 2, a minute later: the same person under the new day's salt is another visitor of that day.
    clock.set('2026-07-02T00:01:00Z');
    await hit('A', '/blog');
    await hit('B', '/');
    await flush();

    const expected = {
      '2026-07-01': { visitors: 2, pageviews: 7, events: 8, visits: 3 },
      '2026-07-02': { visitors: 2, pageviews: 2, events: 2, visits: 2 },
    };
    assert.deepEqual(await oldWay('2026-07-01', '2026-07-02'), expected);
    assert.deepEqual(await series('2026-07-01', '2026-07-02'), expected);
    const both = await total('2026-07-01', '2026-07-02');
    assert.deepEqual(both, { visitors: { value: 4 }, pageviews: { value: 9 }, events: { value: 10 }, visits: { value: 5 } });
    assert.deepEqual(await kept('analytics_day_totals'), ['2026-07-01', '2026-07-02']);
    assert.deepEqual(await kept('analytics_day_visitors'), ['2026-07-01', '2026-07-01', '2026-07-02', '2026-07-02']);

    // Filtered: from the raw rows, A's two google visits on July 1 only.
    const google = await total('2026-07-01', '2026-07-02', 'visit:source==google.com');
    assert.deepEqual(google, { visitors: { value: 1 }, pageviews: { value: 5 }, events: { value: 6 }, visits: { value: 2 } });
    const notBlog = await total('2026-07-01', '2026-07-02', 'event:page!=/blog');
    assert.deepEqual(notBlog, { visitors: { value: 3 }, pageviews: { value: 6 }, events: { value: 7 }, visits: { value: 3 } });
    // Per dimension: still distinct visitors per value.
    const pages = await stats('period=custom&from=2026-07-01&to=2026-07-02&metrics=visitors,pageviews&dimension=event:page');
    assert.deepEqual(pages.results, [
      { page: '/', visitors: 2, pageviews: 4 },
      { page: '/blog', visitors: 2, pageviews: 3 },
      { page: '/docs', visitors: 1, pageviews: 1 },
      { page: '/pricing', visitors: 1, pageviews: 1 },
    ]);
  });

  test('batches written at the same time count a visitor once', async () => {
    clock.set('2026-07-02T10:00:00Z');
    const event = (visitor: string, i: number): PendingEvent => ({
      property_id: pid,
      workspace_id: wid,
      at: new Date(Date.parse('2026-07-02T10:00:00Z') + i * 1000).toISOString(),
      day: '2026-07-02',
      name: 'pageview',
      visitor_id: visitor,
      path: '/race',
      referrer: null,
      source: null,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
      utm_content: null,
      utm_term: null,
      country: null,
      region: null,
      city: null,
      browser: null,
      os: null,
      device: null,
      props: null,
    });
    await Promise.all(
      Array.from({ length: 4 }, (_, k) =>
        writeBatch(
          s.app,
          ['r1', 'r2', `r-own-${k}`].map((v, i) => event(v, k * 10 + i)),
        ),
      ),
    );
    const day2 = { visitors: 2 + 6, pageviews: 2 + 12, events: 2 + 12 };
    const old = (await oldWay('2026-07-02', '2026-07-02'))['2026-07-02'];
    assert.deepEqual({ visitors: old.visitors, pageviews: old.pageviews, events: old.events }, day2);
    const now = await total('2026-07-02', '2026-07-02');
    assert.deepEqual({ visitors: now.visitors.value, pageviews: now.pageviews.value, events: now.events.value }, day2);
  });

  test('the dashboard total stays the same across the rollup of the day that ended', async () => {
    clock.set('2026-07-03T02:00:00Z');
    const period = 'period=30d&date=2026-07-03&metrics=visitors,pageviews,events,visits,bounce_rate';
    const before = await stats(period);
    const seriesBefore = await series('2026-07-01', '2026-07-03');
    assert.equal(before.rolled_through, null);
    assert.equal(await rollUp(s.app), 2, 'July 1 and 2');
    const after = await stats(period);
    assert.equal(after.rolled_through, '2026-07-02');
    assert.deepEqual(after.results, before.results);
    assert.deepEqual(await series('2026-07-01', '2026-07-03'), seriesBefore);
    assert.deepEqual(await kept('analytics_day_totals'), [], 'the rolled-up days’ rows are gone');
    assert.deepEqual(await kept('analytics_day_visitors'), []);

    // The new day counts on top of the rollups, again as the raw rows say.
    await hit('A', '/');
    await hit('A', '/docs');
    await hit('E', '/');
    await flush();
    const today = await stats(period);
    assert.equal(today.results.visitors.value, before.results.visitors.value + 2);
    assert.equal(today.results.pageviews.value, before.results.pageviews.value + 3);
    assert.deepEqual((await oldWay('2026-07-03', '2026-07-03'))['2026-07-03'], { visitors: 2, pageviews: 3, events: 3, visits: 2 });
    assert.deepEqual((await series('2026-07-03', '2026-07-03'))['2026-07-03'], { visitors: 2, pageviews: 3, events: 3, visits: 2 });
  });
});
