import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ingestion } from '../../src/analytics/ingest.js';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { SaltCache } from '../../src/analytics/visitor.js';
import { EventWriter } from '../../src/analytics/writer.js';
import { runRetention } from '../../src/lifecycle/retention.js';
import { deleteWorkspace, runWorkspaceDeletion } from '../../src/lifecycle/workspace-deletion.js';
import { DAY, HOUR, type ManualClock, MINUTE } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

describe('analytics ingestion (POST /a/e)', () => {
  let s: TestServer;
  let seed: Seed;
  let clock: ManualClock;
  let propertyId: string;

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    clock = s.clock as ManualClock;
    clock.set('2026-03-10T10:00:00Z');
    seed = await seedWorkspace(s.app);
    propertyId = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'shop.example', subdomains: false })).id;
    await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'blog.example', subdomains: true });
  });
  after(() => s.stop());

  const flush = () => ingestionOf(s.app).writer.flush();
  async function send(body: unknown, opts: { origin?: string | null; ua?: string | null; gpc?: boolean; raw?: string } = {}) {
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (opts.origin !== null) headers.origin = opts.origin ?? 'https://shop.example';
    if (opts.ua !== null) headers['user-agent'] = opts.ua ?? CHROME;
    if (opts.gpc) headers['sec-gpc'] = '1';
    const r = await s.request('POST', '/a/e', { raw: opts.raw ?? JSON.stringify(body), headers });
    assert.equal(r.status, 202);
    return r.headers.get('svc-analytics-dropped');
  }
  const events = () => s.app.db.selectFrom('analytics_events').selectAll().where('property_id', '=', propertyId).orderBy('at').orderBy('id').execute();
  const pageview = (path = '/', extra: Record<string, unknown> = {}) => ({ d: 'shop.example', u: `https://shop.example${path}`, r: null, w: 1280, ...extra });

  test('a pageview is counted: path without the query (but utm_*, ref, source), browser/OS/device, a visitor hash, no address', async () => {
    const dropped = await send(
      pageview('/pricing/?utm_source=news&utm_campaign=spring&email=a%40b.example&token=secret', { r: 'https://www.google.com/search?q=x' }),
    );
    assert.equal(dropped, null);
    await flush();
    const [e] = await events();
    assert.equal(e.name, 'pageview');
    assert.equal(e.path, '/pricing');
    assert.equal(e.utm_source, 'news');
    assert.equal(e.utm_campaign, 'spring');
    assert.equal(e.source, 'news');
    assert.equal(e.referrer, 'google.com');
    assert.equal(e.browser, 'Chrome');
    assert.equal(e.os, 'Windows');
    assert.equal(e.device, 'desktop');
    assert.match(e.visitor_id!, /^[A-Za-z0-9_-]{22}$/);
    assert.ok(e.visit_id);
    const everything =
      JSON.stringify(await s.app.db.selectFrom('analytics_events').selectAll().execute()) +
      JSON.stringify(await s.app.db.selectFrom('analytics_visits').selectAll().execute());
    for (const secret of ['127.0.0.1', 'secret', 'a@b.example', 'a%40b', 'Chrome/131', 'Windows NT']) assert.ok(!everything.includes(secret), secret);
    for (const line of s.rawLogs) assert.ok(!line.includes('secret') && !line.includes('a%40b'), line);
  });

  test('each drop answers 202 and names its reason in the header; the metric counts it', async () => {
    const before = (await events()).length;
    assert.equal(await send(pageview(), { ua: GOOGLEBOT }), 'bot');
    assert.equal(await send(pageview(), { ua: null }), 'bot');
    assert.equal(await send(pageview(), { origin: 'https://evil.example' }), 'origin');
    assert.equal(await send(pageview(), { origin: null }), 'origin');
    assert.equal(await send(pageview(), { origin: 'https://sub.shop.example' }), 'origin', 'no subdomains for this property');
    assert.equal(await send({ ...pageview(), d: 'unknown.example' }), 'origin');
    assert.equal(await send({ ...pageview(), u: 'https://other.example/' }), 'origin', 'the page must be on the domain');
    assert.equal(await send(null, { raw: '{not json' }), 'invalid');
    assert.equal(await send({ ...pageview(), n: 'x'.repeat(65) }), 'invalid');
    assert.equal(await send({ ...pageview(), extra: 1 }), 'invalid');
    const props = Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, 'v']));
    assert.equal(await send({ ...pageview(), n: 'Signup', p: props }), 'invalid');
    assert.equal(await send({ ...pageview(), n: 'Signup', p: { plan: 'x'.repeat(257) } }), 'invalid');
    assert.equal(await send(null, { raw: JSON.stringify({ ...pageview(), r: `https://r.example/${'a'.repeat(2048)}` }) }), 'invalid', 'over 2 KiB');
    const huge = await s.request('POST', '/a/e', {
      raw: 'x'.repeat(1024 * 1024 + 1),
      headers: { 'content-type': 'text/plain', origin: 'https://shop.example' },
    });
    assert.equal(huge.status, 413, 'past 1 MiB the body is not read at all');
    await flush();
    assert.equal((await events()).length, before);
    const metrics = await (await fetch(s.metricsUrl)).text();
    assert.match(metrics, /svc_analytics_events_dropped_total\{reason="bot"\} 2/);
    assert.match(metrics, /svc_analytics_events_dropped_total\{reason="origin"\} 5/);
    assert.match(metrics, /svc_analytics_events_dropped_total\{reason="invalid"\} 6/);
  });

  test('subdomains count when the property allows them; custom events keep their props', async () => {
    const blog = { d: 'blog.example', u: 'https://news.blog.example/post/1', r: null, w: 390, n: 'Signup', p: { plan: 'pro', seats: 3 } };
    assert.equal(await send(blog, { origin: 'https://news.blog.example', ua: IPHONE }), null);
    await flush();
    const e = await s.app.db.selectFrom('analytics_events').selectAll().where('name', '=', 'Signup').executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(e.props!), { plan: 'pro', seats: 3 });
    assert.equal(e.device, 'mobile');
    assert.equal(e.os, 'iOS');
  });

  test('Sec-GPC: 1 counts the pageview without a visitor hash', async () => {
    assert.equal(await send(pageview('/gpc'), { gpc: true }), null);
    await flush();
    const e = (await events()).find((x) => x.path === '/gpc')!;
    assert.equal(e.visitor_id, null);
    assert.equal(e.visit_id, null);
  });

  test('a visit goes on while events come within 30 minutes and ends after 30 idle minutes', async () => {
    const ua = `${CHROME} visit-test`;
    await send(pageview('/a'), { ua });
    await flush();
    clock.advance(10 * MINUTE);
    await send(pageview('/b'), { ua });
    await flush();
    clock.advance(31 * MINUTE);
    await send(pageview('/c'), { ua });
    await flush();
    const mine = (await events()).filter((e) => ['/a', '/b', '/c'].includes(e.path));
    assert.equal(new Set(mine.map((e) => e.visitor_id)).size, 1, 'the same visitor all day');
    assert.equal(mine[0].visit_id, mine[1].visit_id);
    assert.notEqual(mine[1].visit_id, mine[2].visit_id);
    const visit = await s.app.db.selectFrom('analytics_visits').selectAll().where('id', '=', mine[0].visit_id!).executeTakeFirstOrThrow();
    assert.equal(Number(visit.pageviews), 2);
    assert.equal(visit.entry_path, '/a');
    assert.equal(visit.exit_path, '/b');
  });

  test('salts rotate daily: the same person is another visitor tomorrow, and salts older than yesterday are gone', async () => {
    const ua = `${CHROME} salt-test`;
    await send(pageview('/day1'), { ua });
    await flush();
    const firstSalts = await s.app.db.selectFrom('analytics_salts').selectAll().execute();
    clock.advance(DAY);
    await send(pageview('/day2'), { ua });
    await flush();
    clock.advance(DAY);
    await send(pageview('/day3'), { ua });
    await flush();
    const mine = (await events()).filter((e) => e.path.startsWith('/day'));
    assert.equal(new Set(mine.map((e) => e.visitor_id)).size, 3);
    const days = (await s.app.db.selectFrom('analytics_salts').select('day').orderBy('day').execute()).map((r) => r.day);
    assert.deepEqual(days, ['2026-03-11', '2026-03-12']);
    for (const old of firstSalts) assert.ok(!days.includes(old.day));
  });

  test('an address sending more than 120 events a minute is dropped with rate', async () => {
    clock.set('2026-03-12T12:00:00Z');
    let reasons: (string | null)[] = [];
    for (let i = 0; i < 121; i++) reasons.push(await send(pageview(`/r${i}`)));
    assert.deepEqual(reasons.slice(0, 120).filter(Boolean), []);
    assert.equal(reasons[120], 'rate');
    clock.advance(MINUTE);
    reasons = [await send(pageview('/after'))];
    assert.deepEqual(reasons, [null]);
    await flush();
  });

  test('past the events that may wait in memory, more are dropped with backlog and counted; conversation events are kept', async () => {
    // A buffer of 3 that writes only when flushed: as when the database writes slower than events come.
    const writer = new EventWriter(s.app, { maxWaiting: 3, flushMs: HOUR });
    const ingestion = new Ingestion(s.app, writer, new SaltCache(), ingestionOf(s.app).geo);
    const take = (path: string, n?: string) =>
      ingestion.take({
        body: JSON.stringify(pageview(path, n ? { n } : {})),
        origin: 'https://shop.example',
        userAgent: CHROME,
        address: '192.0.2.7',
        gpc: false,
      });
    const countOf = async () => Number(/svc_analytics_events_dropped_total\{reason="backlog"\} (\d+)/.exec(await (await fetch(s.metricsUrl)).text())?.[1]);
    const dropped = await countOf();
    assert.equal(dropped, 0, 'the metric starts at 0');
    assert.deepEqual([await take('/bk1'), await take('/bk2'), await take('/bk3')], [null, null, null]);
    assert.equal(writer.waiting, 3);
    assert.equal(await take('/bk4'), 'backlog');
    assert.equal(await take('/bk5', 'Signup'), 'backlog');
    assert.equal(await take('/bk6', 'Chat Opened'), null, 'a conversation event is never dropped');
    assert.equal(writer.waiting, 4);
    assert.equal(await countOf(), 2);
    await writer.flush();
    assert.equal(writer.waiting, 0);
    assert.equal(await take('/bk7'), null, 'taken again once written');
    await writer.flush();
    const paths = (await events()).map((e) => e.path).filter((p) => p.startsWith('/bk'));
    assert.deepEqual(paths.sort(), ['/bk1', '/bk2', '/bk3', '/bk6', '/bk7']);
  });

  test('raw events older than SVC_ANALYTICS_RAW_DAYS go; deleting a property or the workspace deletes its data', async () => {
    assert.ok((await events()).length > 0);
    clock.advance(91 * DAY);
    await runRetention(s.app);
    assert.equal((await events()).length, 0);
    assert.equal((await s.app.db.selectFrom('analytics_visits').select('id').execute()).length, 0);

    await send(pageview('/again'));
    await flush();
    assert.equal((await events()).length, 1);
    const del = await s.request('DELETE', `/v1/analytics/properties/${propertyId}`, { token: seed.apiKey });
    assert.equal(del.status, 204);
    assert.equal(await send(pageview('/gone')), 'origin', 'counting stops at once');
    await runRetention(s.app);
    assert.equal((await events()).length, 0);
    for (const table of ['analytics_day_visitors', 'analytics_day_totals'] as const)
      assert.equal((await s.app.db.selectFrom(table).select('day').where('property_id', '=', propertyId).execute()).length, 0, table);
    assert.equal((await s.app.db.selectFrom('analytics_properties').select('id').where('id', '=', propertyId).execute()).length, 0);

    await send({ d: 'blog.example', u: 'https://blog.example/', r: null, w: 800 }, { origin: 'https://blog.example' });
    await flush();
    assert.ok((await s.app.db.selectFrom('analytics_events').select('id').where('workspace_id', '=', seed.workspaceId).execute()).length > 0);
    await deleteWorkspace(s.app, { workspaceId: seed.workspaceId, requestedBy: 'operator' });
    await runWorkspaceDeletion(s.app, seed.workspaceId);
    for (const table of [
      'analytics_events',
      'analytics_visits',
      'analytics_day_visitors',
      'analytics_day_totals',
      'analytics_properties',
      'analytics_usage',
    ] as const) {
      assert.equal((await s.app.db.selectFrom(table).select('workspace_id').where('workspace_id', '=', seed.workspaceId).execute()).length, 0, table);
    }
  });
});
