import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProperty, setMonthlyLimit } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('POST /v1/analytics/events (server-side events)', () => {
  let s: TestServer;
  let seed: Seed;
  let other: Seed;
  let propertyId: string;
  let otherProperty: string;
  let writer: string;

  before(async () => {
    s = await startTestServer();
    (s.clock as ManualClock).set('2026-03-10T10:00:00Z');
    seed = await seedWorkspace(s.app);
    other = await seedWorkspace(s.app);
    propertyId = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'shop.example' })).id;
    otherProperty = (await createProperty(s.app, { workspaceId: other.workspaceId, domain: 'other.example' })).id;
    writer = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'backend', scopes: ['analytics:write'] })).secret;
  });
  after(() => s.stop());

  const post = (body: unknown, token = writer) => s.request('POST', '/v1/analytics/events', { token, body });
  const events = async () => {
    await ingestionOf(s.app).writer.flush();
    return s.app.db.selectFrom('analytics_events').selectAll().where('property_id', '=', propertyId).orderBy('at').orderBy('id').execute();
  };

  test('an event with the visitor’s address and user agent joins the visit the tracker started; no address is stored', async () => {
    const seen = await s.request('POST', '/a/e', {
      raw: JSON.stringify({ d: 'shop.example', u: 'https://shop.example/checkout', r: null, w: 1280 }),
      headers: { 'content-type': 'text/plain', origin: 'https://shop.example', 'user-agent': CHROME },
    });
    assert.equal(seen.status, 202);
    const r = await post({
      property_id: propertyId,
      name: 'Purchase',
      url: 'https://shop.example/checkout?order=123&utm_campaign=spring',
      props: { plan: 'pro', amount: 49, trial: false },
      ip: '127.0.0.1',
      user_agent: CHROME,
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.deepEqual(r.body, { accepted: true, dropped: null });
    const [view, purchase] = await events();
    assert.equal(purchase.name, 'Purchase');
    assert.equal(purchase.path, '/checkout');
    assert.equal(purchase.utm_campaign, 'spring');
    assert.deepEqual(JSON.parse(purchase.props!), { plan: 'pro', amount: 49, trial: false });
    assert.equal(purchase.visitor_id, view.visitor_id, 'the same visitor (same salt, property, address, user agent)');
    assert.equal(purchase.visit_id, view.visit_id, 'the same visit');
    assert.equal(purchase.browser, 'Chrome');
    const everything = JSON.stringify(await s.app.db.selectFrom('analytics_events').selectAll().execute());
    assert.ok(!everything.includes('127.0.0.1') && !everything.includes('order=123'));
  });

  test('without the visitor it counts with no visitor hash; a bot user agent is dropped and says so', async () => {
    const before = (await events()).length;
    const r = await post({ property_id: propertyId, name: 'Refund', url: 'https://shop.example/' });
    assert.deepEqual(r.body, { accepted: true, dropped: null });
    const bot = await post({ property_id: propertyId, name: 'Refund', url: 'https://shop.example/', ip: '127.0.0.1', user_agent: 'curl/8.5.0' });
    assert.equal(bot.status, 202);
    assert.deepEqual(bot.body, { accepted: false, dropped: 'bot' });
    const rows = await events();
    assert.equal(rows.length, before + 1);
    assert.equal(rows.at(-1)!.visitor_id, null);
    assert.equal(rows.at(-1)!.visit_id, null);
  });

  test('bad input is a 400 and stores nothing; another workspace’s property is 404; keys need analytics:write', async () => {
    const before = (await events()).length;
    for (const [body, why] of [
      [{ property_id: propertyId, name: 'X', url: 'https://elsewhere.example/' }, /url must be a page of shop\.example/],
      [{ property_id: propertyId, name: 'x'.repeat(65), url: 'https://shop.example/' }, /name/],
      [{ property_id: propertyId, name: 'X', url: 'not a url' }, /url/],
      [{ property_id: propertyId, name: 'X', url: 'https://shop.example/', ip: '999.1.1.1' }, /not an IP address/],
      [
        { property_id: propertyId, name: 'X', url: 'https://shop.example/', props: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, i])) },
        /at most 30 props/,
      ],
      [{ property_id: propertyId, name: 'X', url: 'https://shop.example/', extra: 1 }, /extra|unrecognized/i],
    ] as const) {
      const r = await post(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(JSON.stringify(r.body.error), why, 'the answer says what is wrong');
    }
    const foreign = await post({ property_id: otherProperty, name: 'X', url: 'https://other.example/' });
    assert.equal(foreign.status, 404);
    const reader = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'reader', scopes: ['analytics:read'] })).secret;
    const refused = await post({ property_id: propertyId, name: 'X', url: 'https://shop.example/' }, reader);
    assert.equal(refused.status, 403);
    assert.equal((await events()).length, before);
  });

  test('custom event props: a breakdown by a prop’s value, filtered by event name', async () => {
    const r = await post({ property_id: propertyId, name: 'Purchase', url: 'https://shop.example/checkout', props: { plan: 'team', amount: 99 } });
    assert.deepEqual(r.body, { accepted: true, dropped: null });
    await post({ property_id: propertyId, name: 'Trial', url: 'https://shop.example/', props: { plan: 'pro' } });
    await ingestionOf(s.app).writer.flush();
    const stats = (query: string) => s.request('GET', `/v1/analytics/stats?property_id=${propertyId}&period=day&${query}`, { token: seed.apiKey });
    const plans = await stats('dimension=event:props:plan&metrics=events,visitors&filters=event:name==Purchase');
    assert.equal(plans.status, 200, JSON.stringify(plans.body));
    assert.deepEqual(plans.body.results, [
      { plan: 'pro', events: 1, visitors: 1 },
      { plan: 'team', events: 1, visitors: 0 },
    ]);
    const all = await stats('dimension=event:props:plan&metrics=events');
    assert.deepEqual(all.body.results, [
      { plan: 'pro', events: 2 },
      { plan: 'team', events: 1 },
    ]);
    const amounts = await stats('dimension=event:props:amount&metrics=events');
    assert.deepEqual(amounts.body.results, [
      { amount: '49', events: 1 },
      { amount: '99', events: 1 },
    ]);
    assert.equal((await stats('dimension=event:props:plan&metrics=bounce_rate')).status, 400);
    assert.equal((await stats('dimension=event:props:plan&filters=visit:source==x')).status, 400);
    assert.equal((await stats('dimension=event:props:')).status, 400);
  });

  test('past 110 % of the monthly limit a server-side event is dropped with quota', async () => {
    await setMonthlyLimit(s.app, seed.workspaceId, 2);
    await ingestionOf(s.app).writer.flush();
    const r = await post({ property_id: propertyId, name: 'Purchase', url: 'https://shop.example/' });
    assert.deepEqual(r.body, { accepted: false, dropped: 'quota' });
  });
});
