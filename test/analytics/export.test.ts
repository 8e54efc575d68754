import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { createProperty } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ua = (who: string) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ${who}`;

describe('GET /v1/analytics/export', () => {
  let s: TestServer;
  let seed: Seed;
  let pid: string;
  let reader: string;

  async function hit(who: string, path: string) {
    const body = { d: 'csv.example', u: `https://csv.example${path}`, r: null, w: 1280 };
    const headers = { origin: 'https://csv.example', 'user-agent': ua(who), 'content-type': 'text/plain' };
    const r = await s.request('POST', '/a/e', { raw: JSON.stringify(body), headers });
    assert.equal(r.status, 202);
  }
  const exportCsv = (query: string, token = reader) => s.request('GET', `/v1/analytics/export?property_id=${pid}&${query}`, { token });

  before(async () => {
    s = await startTestServer();
    await s.app.jobs.stop();
    (s.clock as ManualClock).set('2026-06-01T09:00:00Z');
    seed = await seedWorkspace(s.app);
    pid = (await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'csv.example' })).id;
    reader = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'reader', scopes: ['analytics:read'] })).secret;
    // A visitor-chosen campaign that a spreadsheet would run as a formula, and one with a comma and quotes.
    await hit('A', `/?utm_campaign=${encodeURIComponent('=HYPERLINK("http://evil.example","x")')}`);
    await hit('B', `/pricing?utm_campaign=${encodeURIComponent('spring, "big" sale')}`);
    await hit('C', '/pricing');
    await ingestionOf(s.app).writer.flush();
  });
  after(() => s.stop());

  test('a breakdown as CSV: the same rows as the JSON answer, formulas escaped, quoting right', async () => {
    const json = await s.request('GET', `/v1/analytics/stats?property_id=${pid}&period=7d&metrics=visitors,pageviews&dimension=visit:utm_campaign`, {
      token: reader,
    });
    const r = await exportCsv('period=7d&metrics=visitors,pageviews&dimension=visit:utm_campaign');
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(r.headers.get('content-disposition'), 'attachment; filename="analytics-csv.example-visit_utm_campaign-2026-05-26-2026-06-01.csv"');
    const rows: string[][] = parse(r.body as string);
    assert.deepEqual(rows[0], ['utm_campaign', 'visitors', 'pageviews']);
    assert.equal(rows.length, json.body.results.length + 1);
    const byCampaign = new Map(rows.slice(1).map((row) => [row[0], row.slice(1)]));
    assert.deepEqual(byCampaign.get(`'=HYPERLINK("http://evil.example","x")`), ['1', '1'], 'the formula starts with a quote mark');
    assert.deepEqual(byCampaign.get('spring, "big" sale'), ['1', '1']);
    assert.deepEqual(byCampaign.get(''), ['1', '1'], 'no campaign: an empty cell');
    assert.ok((r.body as string).endsWith('\r\n'));
  });

  test('totals, days and custom event props', async () => {
    const totals: string[][] = parse((await exportCsv('period=7d&metrics=visitors,pageviews&compare=previous_period')).body as string);
    assert.deepEqual(totals, [
      ['metric', 'value', 'change_percent'],
      ['visitors', '3', ''],
      ['pageviews', '3', ''],
    ]);
    const days: string[][] = parse((await exportCsv('period=7d&metrics=pageviews&dimension=time:day')).body as string);
    assert.equal(days.length, 8);
    assert.deepEqual(days[0], ['date', 'pageviews']);
    assert.deepEqual(days.at(-1), ['2026-06-01', '3']);
  });

  test('refused as the stats are: bad query 400, foreign property 404, no analytics:read 403', async () => {
    const bad = await exportCsv('dimension=visit:shoe');
    assert.equal(bad.status, 400);
    assert.equal((bad.body as { error: { code: string } }).error.code, 'invalid_request');
    const other = await seedWorkspace(s.app);
    const foreign = await createProperty(s.app, { workspaceId: other.workspaceId, domain: 'foreign.example' });
    assert.equal((await s.request('GET', `/v1/analytics/export?property_id=${foreign.id}`, { token: reader })).status, 404);
    const noScope = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'c', scopes: ['conversations:read'] })).secret;
    assert.equal((await exportCsv('period=7d', noScope)).status, 403);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await exportCsv('period=7d', agent.token)).status, 200);
  });
});
