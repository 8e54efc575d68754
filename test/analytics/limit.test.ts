import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProperty, setMonthlyLimit } from '../../src/analytics/properties.js';
import { ingestionOf } from '../../src/analytics/runtime.js';
import type { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('analytics monthly limit (80 %, 100 %, 110 %)', () => {
  let s: TestServer;
  let seed: Seed;
  let clock: ManualClock;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({
      env: { SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(sink.port), SVC_SMTP_TLS: 'none', SVC_OPERATOR_EMAIL: 'operator@example.net' },
    });
    await s.app.jobs.stop();
    clock = s.clock as ManualClock;
    clock.set('2026-04-30T20:00:00Z');
    seed = await seedWorkspace(s.app);
    await createProperty(s.app, { workspaceId: seed.workspaceId, domain: 'quota.example' });
    await setMonthlyLimit(s.app, seed.workspaceId, 10);
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const flush = () => ingestionOf(s.app).writer.flush();
  async function send(n?: string) {
    const body = { d: 'quota.example', u: `https://quota.example/p`, r: null, w: 1200, ...(n ? { n } : {}) };
    const r = await s.request('POST', '/a/e', {
      raw: JSON.stringify(body),
      headers: { origin: 'https://quota.example', 'user-agent': CHROME, 'content-type': 'text/plain' },
    });
    assert.equal(r.status, 202);
    return r.headers.get('svc-analytics-dropped');
  }
  const notices = async () =>
    (await s.app.db.selectFrom('jobs').select('payload').where('kind', '=', 'analytics.limit_notice').execute()).map(
      (j) => JSON.parse(String(j.payload)).level,
    );
  const ownerMails = () => sink.messages.filter((m) => !m.to.includes('operator@example.net'));
  const usage = async () => (await s.request('GET', '/v1/analytics/usage', { token: seed.ownerToken })).body;

  test('owners are told at 80 % and at 100 % (mail and operator digest line), once each', async () => {
    for (let i = 0; i < 7; i++) assert.equal(await send(), null);
    await flush();
    assert.deepEqual(await notices(), []);
    assert.equal((await usage()).state, 'ok');
    assert.equal(await send(), null);
    await flush();
    assert.deepEqual(await notices(), [80]);
    assert.deepEqual(await usage(), { month: '2026-04', events: 8, limit: 10, percent: 80, state: 'warning' });
    await s.app.jobs.drain();
    await sink.waitFor(2); // the owner's mail and the operator digest
    const [mail] = ownerMails();
    assert.equal(ownerMails().length, 1);
    assert.ok(sink.messages.some((m) => m.to.includes('operator@example.net') && /Analytics monthly limit/.test(m.parsed.text ?? '')));
    assert.match(mail.parsed.subject ?? '', /80 % of this month’s events used/);
    assert.match(mail.parsed.text ?? '', /8 of its 10 analytics events for 2026-04/);
    const lines = await s.app.db.selectFrom('operator_digest_lines').selectAll().where('kind', '=', 'analytics_limit').execute();
    assert.equal(lines.length, 1);
    assert.match(lines[0].text, /used 80 % of its analytics limit/);

    assert.equal(await send(), null);
    assert.equal(await send(), null);
    await flush();
    assert.equal((await usage()).state, 'reached');
    assert.deepEqual((await notices()).sort(), [100]);
    await s.app.jobs.drain();
    await sink.waitFor(3);
    assert.equal(ownerMails().length, 2);
    assert.match(ownerMails()[1].parsed.subject ?? '', /100 %/);
    await flush();
    assert.deepEqual(await notices(), [], 'no notice twice');
  });

  test('events are accepted to 110 %, then pageviews are dropped with quota; conversation events never', async () => {
    assert.equal(await send(), null, 'the 11th event (110 %) is still taken');
    assert.equal(await send(), 'quota');
    assert.equal(await send('Signup'), 'quota');
    assert.equal(await send('Conversation Started'), null);
    await flush();
    assert.equal(await send(), 'quota', 'still over after the usage is read again');
    const u = await usage();
    assert.equal(u.events, 12);
    assert.equal(u.state, 'over');
    const metrics = await (await fetch(s.metricsUrl)).text();
    assert.match(metrics, /svc_analytics_events_dropped_total\{reason="quota"\} 3/);
  });

  test('a new UTC month counts again from zero', async () => {
    clock.set('2026-05-01T00:00:01Z');
    assert.equal(await send(), null);
    await flush();
    assert.deepEqual(await usage(), { month: '2026-05', events: 1, limit: 10, percent: 10, state: 'ok' });
    assert.equal(ownerMails().length, 2);
  });
});
