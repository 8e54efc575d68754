import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { intradayRows } from '../../src/analytics/intraday.js';
import { dayValueRows, KEPT_DIMENSIONS } from '../../src/analytics/intraday-values.js';
import { createProperty } from '../../src/analytics/properties.js';
import { rollUp } from '../../src/analytics/reports.js';
import { byValue, type DayRow, type Metric, metricValue, parseFilters, rawRows } from '../../src/analytics/stats.js';
import { type PendingEvent, writeBatch } from '../../src/analytics/writer.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Today's breakdowns by the kept dimensions come from the writer's per-value figures (issue 39):
// they must answer what counting distinct visitors over the raw events and visits answers,
// including exit pages that move on as a visit goes on and batches written at the same time.
describe('analytics: today’s breakdowns from the writer’s kept values', () => {
  let s: TestServer;
  let pid: string;
  let wid: string;
  let reader: string;

  const stats = async (query: string) => {
    const r = await s.request('GET', `/v1/analytics/stats?property_id=${pid}&${query}`, { token: reader });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const metricsOf = (dimension: string): Metric[] =>
    dimension.startsWith('event:') ? ['visitors', 'pageviews', 'events'] : ['visitors', 'visits', 'bounce_rate', 'visit_duration', 'pageviews'];
  /** value → metrics, as the API answers a breakdown of [from, to]. */
  const answered = async (from: string, to: string, dimension: string, filters = '') => {
    const metrics = metricsOf(dimension);
    const body = await stats(
      `period=custom&from=${from}&to=${to}&metrics=${metrics.join(',')}&dimension=${dimension}&limit=1000${filters ? `&filters=${encodeURIComponent(filters)}` : ''}`,
    );
    const key = dimension.split(':')[1];
    return Object.fromEntries(body.results.map((r: Record<string, unknown>) => [String(r[key]), metrics.map((m) => r[m])]));
  };
  /** The computation the dashboard made before: distinct visitors over the raw rows. */
  const raw = async (from: string, to: string, dimension: string, filters = '') => {
    const metrics = metricsOf(dimension);
    const rows = await rawRows(s.app.db, pid, from, to, dimension, parseFilters(filters));
    return Object.fromEntries([...byValue(rows)].map(([value, sums]) => [String(value), metrics.map((m) => metricValue(m, sums))]));
  };
  /** Every sum of every day and value, sorted: the kept rows must equal the raw rows' sums exactly (not only as rounded rates). */
  const sums = (rows: DayRow[]) =>
    rows.map((r) => `${r.day} ${r.value} v${r.visitors} pv${r.pageviews} e${r.events} vi${r.visits} b${r.bounces} d${r.duration_s}`).sort();
  const keptSums = async (from: string, to: string, dimension: string | null) =>
    sums(dimension ? await dayValueRows(s.app.db, pid, from, to, dimension) : await intradayRows(s.app.db, pid, from, to));
  const rawSums = async (from: string, to: string, dimension: string | null) => sums(await rawRows(s.app.db, pid, from, to, dimension, []));
  const kept = async () => (await s.app.db.selectFrom('analytics_day_values').select('day').where('property_id', '=', pid).execute()).length;

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    (s.clock as ManualClock).set('2026-07-01T08:00:00Z');
    const seed = await seedWorkspace(s.app);
    wid = seed.workspaceId;
    pid = (await createProperty(s.app, { workspaceId: wid, domain: 'values.example' })).id;
    reader = (await createApiKey(s.app, { workspaceId: wid, name: 'reader', scopes: ['analytics:read'] })).secret;
  });
  after(() => s.stop());

  let seed = 12345;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)];
  const event = (at: number, visitor: string | null): PendingEvent => ({
    property_id: pid,
    workspace_id: wid,
    at: new Date(at).toISOString(),
    day: new Date(at).toISOString().slice(0, 10),
    name: rand() < 0.15 ? pick(['Signup', 'Chat Opened']) : 'pageview',
    visitor_id: visitor,
    path: pick(['/', '/pricing', '/docs', '/blog', '/blog/a', '/contact']),
    referrer: null,
    source: pick([null, 'google.com', 'news.ycombinator.com']),
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    utm_content: null,
    utm_term: null,
    country: pick([null, 'DE', 'TR', 'US']),
    region: null,
    city: null,
    browser: pick([null, 'Chrome', 'Firefox', 'Safari']),
    os: pick(['Linux', 'Mac', 'iOS']),
    device: pick(['desktop', 'mobile']),
    props: null,
  });

  test('many visitors over batches, visits that go on and end, a second visit, no-hash events, a day boundary, batches at once', async () => {
    // July 1 from 22:00 to July 2 00:40: visitors come back after a few minutes (the same visit, its
    // exit page moves on) or after more than 30 minutes (a new visit); a visit started before
    // midnight goes on after it (its day stays July 1).
    let at = Date.parse('2026-07-01T22:00:00Z');
    const visitors = Array.from({ length: 25 }, (_, i) => `v${i}`);
    for (let b = 0; b < 12; b++) {
      const batches = Array.from({ length: b % 3 === 2 ? 3 : 1 }, () => {
        const batch: PendingEvent[] = [];
        for (let i = 0; i < 20; i++) {
          at += Math.floor(rand() * 40_000);
          batch.push(event(at, rand() < 0.05 ? null : pick(visitors)));
        }
        return batch;
      });
      await Promise.all(batches.map((batch) => writeBatch(s.app, batch)));
      at += b % 4 === 3 ? 35 * MINUTE : 2 * MINUTE;
    }
    assert.ok(at > Date.parse('2026-07-02T00:10:00Z'), 'the events cross midnight');
    const exits = await s.app.db.selectFrom('analytics_visits').select(['exit_path', 'entry_path']).where('property_id', '=', pid).execute();
    assert.ok(
      exits.some((v) => v.exit_path !== v.entry_path),
      'some exit pages moved on',
    );

    for (const dimension of KEPT_DIMENSIONS) {
      for (const [from, to] of [
        ['2026-07-01', '2026-07-01'],
        ['2026-07-02', '2026-07-02'],
        ['2026-06-20', '2026-07-02'],
      ]) {
        const expected = await raw(from, to, dimension);
        assert.deepEqual(await answered(from, to, dimension), expected, `${dimension} ${from}..${to}`);
      }
    }
    for (const dimension of [null, ...KEPT_DIMENSIONS])
      for (const [from, to] of [
        ['2026-07-01', '2026-07-01'],
        ['2026-07-02', '2026-07-02'],
      ])
        assert.deepEqual(await keptSums(from, to, dimension), await rawSums(from, to, dimension), `sums of ${dimension ?? 'the day'} ${from}..${to}`);
    const totals = (await rawRows(s.app.db, pid, '2026-07-01', '2026-07-02', null, []))[0];
    assert.ok(totals.visits > totals.bounces && totals.bounces > 0 && totals.duration_s > 0, 'visits that went on and visits that bounced');
    assert.ok(KEPT_DIMENSIONS.has('visit:browser') && KEPT_DIMENSIONS.has('visit:os'));
    assert.ok(Object.keys(await raw('2026-07-01', '2026-07-01', 'visit:exit_page')).length >= 4);
    // A filter on the breakdown's own dimension picks its values (the dashboard's events card).
    const names = await answered('2026-07-01', '2026-07-02', 'event:name', 'event:name!=pageview');
    assert.deepEqual(names, await raw('2026-07-01', '2026-07-02', 'event:name', 'event:name!=pageview'));
    assert.deepEqual(Object.keys(names).sort(), ['Chat Opened', 'Signup']);
    const twoSources = 'visit:source==google.com|news.ycombinator.com';
    assert.deepEqual(await answered('2026-07-01', '2026-07-02', 'visit:source', twoSources), await raw('2026-07-01', '2026-07-02', 'visit:source', twoSources));
    // Another dimension's filter still reads the raw rows.
    const filtered = 'visit:country==DE';
    assert.deepEqual(await answered('2026-07-01', '2026-07-02', 'event:page', filtered), await raw('2026-07-01', '2026-07-02', 'event:page', filtered));
  });

  test('the breakdowns stay the same across the rollup, and the rolled-up days’ values are gone', async () => {
    (s.clock as ManualClock).set('2026-07-03T02:00:00Z');
    const before = Object.fromEntries(await Promise.all([...KEPT_DIMENSIONS].map(async (d) => [d, await answered('2026-06-20', '2026-07-03', d)])));
    assert.ok((await kept()) > 0);
    assert.equal(await rollUp(s.app), 2);
    assert.equal(await kept(), 0);
    assert.equal((await s.app.db.selectFrom('analytics_day_value_visitors').select('day').where('property_id', '=', pid).execute()).length, 0);
    for (const d of KEPT_DIMENSIONS) assert.deepEqual(await answered('2026-06-20', '2026-07-03', d), before[d], d);
  });
});
