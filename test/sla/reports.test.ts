// Reports' SLA figures (issue 35) on a hand-checked fixture: an inbox in Europe/Berlin open Mon–Fri
// 09:00–17:00 with a first response target of 120 and a resolution target of 480 business minutes.
//   A: Friday 16:00 → reply Monday 09:30 (90 business min, in time) → closed Monday 10:00 (120 min).
//   B: Monday 09:00, assigned to the agent → breached at 11:00 → reply 12:00 (180 min) → closed 12:30 (210 min).
// Calendar and business times, % met per target, breaches by inbox and member are known answers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'sla-report-secret';
const OFFICE = [{ start: '09:00', end: '17:00' }];

describe('reports: SLA and business-hours times', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;
  let agent: { personId: string; token: string };
  const clock = new ManualClock(new Date('2026-11-06T15:00:00Z'));

  before(async () => {
    sink = await startSmtpSink({ username: SINK_LOGIN.username, password: SINK_LOGIN.password });
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET }, clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.ownerToken, body: { timezone: 'Europe/Berlin' } });
    await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, {
      token: seed.ownerToken,
      body: { weekly: { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE } },
    });
    const put = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, {
      token: seed.ownerToken,
      body: { default: { first_response_minutes: 120, resolution_minutes: 480 } },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const as = (token: string) => ({ token, headers: { 'svc-workspace': seed.workspaceId } });
  async function mail(from: string) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: rawMail({ To: address, From: from }), token: SECRET });
    assert.equal(r.status, 201);
    return r.body.data[0].conversation_id as string;
  }
  const at = async (time: string) => {
    clock.set(new Date(time));
    await s.app.jobs.drain();
  };
  const reply = async (id: string) =>
    assert.equal((await s.request('POST', `/v1/conversations/${id}/messages`, { ...as(agent.token), body: { body: 'Answer' } })).status, 201);
  const patch = async (id: string, body: unknown) =>
    assert.equal((await s.request('PATCH', `/v1/conversations/${id}`, { ...as(seed.ownerToken), body })).status, 200);

  test('the known answer', async () => {
    const a = await mail('a@cust.example');
    await at('2026-11-09T08:00:00Z');
    const b = await mail('b@cust.example');
    await patch(b, { assignee_id: agent.personId });
    await at('2026-11-09T08:30:00Z');
    await reply(a);
    await at('2026-11-09T09:00:00Z');
    await patch(a, { status: 'closed' });
    await at('2026-11-09T11:00:00Z');
    await reply(b);
    await at('2026-11-09T11:30:00Z');
    await patch(b, { status: 'closed' });
    await s.app.jobs.drain();

    const r = await s.request('GET', '/v1/reports?from=2026-11-06&to=2026-11-09', { token: seed.apiKey });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const t = r.body.totals;
    assert.deepEqual(t.first_response, { count: 2, median_seconds: (235_800 + 10_800) / 2, p90_seconds: 235_800 });
    assert.deepEqual(t.first_response_business, { count: 2, median_seconds: (5_400 + 10_800) / 2, p90_seconds: 10_800 });
    assert.deepEqual(t.resolution, { count: 2, median_seconds: (237_600 + 12_600) / 2, p90_seconds: 237_600 });
    assert.deepEqual(t.resolution_business, { count: 2, median_seconds: (7_200 + 12_600) / 2, p90_seconds: 12_600 });
    assert.deepEqual(r.body.sla, {
      first_response: { met: 1, breached: 1, met_percent: 50 },
      next_response: { met: 0, breached: 0, met_percent: null },
      resolution: { met: 2, breached: 0, met_percent: 100 },
      breaches_by_inbox: [{ inbox_id: seed.inboxId, breaches: 1 }],
      breaches_by_member: [{ member_id: agent.personId, breaches: 1 }],
    });
    const monday = r.body.days.find((d: { day: string }) => d.day === '2026-11-09');
    assert.equal(monday.first_response_business.count, 2);

    const mine = await s.request('GET', `/v1/reports?from=2026-11-06&to=2026-11-09&member_id=${seed.ownerId}`, { token: seed.apiKey });
    assert.deepEqual(mine.body.sla.breaches_by_member, [], 'the owner breached nothing');
    assert.equal(mine.body.sla.first_response.met, 0);
  });
});
