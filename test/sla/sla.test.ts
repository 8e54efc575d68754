// SLA (issue 35) against the real server, on the moved clock (never slept on): the policy API and
// its validation, due / warning / breach / met per target counted in the inbox's business hours
// (Europe/Berlin, Mon–Fri 09:00–17:00), resolution paused while pending, next response per customer
// message, notifications before and at a breach exactly once (assignee; the inbox's members when
// unassigned), the "due first" order, imported conversations without SLA.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { checkSla } from '../../src/sla/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { connectMcp } from '../mcp/helpers.js';

const SECRET = 'sla-secret';
const OFFICE = [{ start: '09:00', end: '17:00' }];

describe('SLA', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;
  let agent: { personId: string; token: string };
  // Friday 2026-11-06 16:00 in Berlin (CET, UTC+1).
  const clock = new ManualClock(new Date('2026-11-06T15:00:00Z'));

  before(async () => {
    sink = await startSmtpSink({ username: SINK_LOGIN.username, password: SINK_LOGIN.password });
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET }, clock });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('PATCH', `/v1/inboxes/${seed.inboxId}`, { token: seed.ownerToken, body: { timezone: 'Europe/Berlin' } })).status, 200);
    const hours = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/hours`, {
      token: seed.ownerToken,
      body: { weekly: { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE } },
    });
    assert.equal(hours.status, 200, JSON.stringify(hours.body));
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const as = (token: string) => ({ token, headers: { 'svc-workspace': seed.workspaceId } });
  async function mail(from: string, extra: Record<string, string> = {}) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, From: from, ...extra }),
      token: SECRET,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0].conversation_id as string;
  }
  const reply = async (id: string) =>
    assert.equal((await s.request('POST', `/v1/conversations/${id}/messages`, { ...as(agent.token), body: { body: 'Answer' } })).status, 201);
  const patch = async (id: string, body: unknown) => {
    const r = await s.request('PATCH', `/v1/conversations/${id}`, { ...as(seed.ownerToken), body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const sla = async (id: string) => (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.sla;
  const told = (id: string) =>
    s.app.db
      .selectFrom('notifications')
      .select(['person_id', 'trigger', 'title'])
      .where('conversation_id', '=', id)
      .where('trigger', 'in', ['sla_warning', 'sla_breached'])
      .orderBy('created_at')
      .orderBy('trigger')
      .execute();
  const outcomes = (id: string) =>
    s.app.db.selectFrom('sla_outcomes').select(['target', 'outcome', 'due_at', 'at', 'member_id']).where('conversation_id', '=', id).orderBy('at').execute();

  test('bad policies are refused with the field and change nothing; agents may not change it', async () => {
    const before = await s.request('GET', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.apiKey });
    assert.equal(before.status, 200);
    assert.deepEqual(before.body, { inbox_id: seed.inboxId, default: null, by_priority: {}, updated_at: null });
    for (const [body, path] of [
      [{ default: { first_response_minutes: -5 } }, 'default.first_response_minutes'],
      [{ default: { resolution_minutes: 1.5 } }, 'default.resolution_minutes'],
      [{ default: { next_response_minutes: 0 } }, 'default.next_response_minutes'],
      [{ default: null, by_priority: { whenever: { first_response_minutes: 5 } } }, 'by_priority.whenever'],
      [{ default: null, by_priority: { urgent: { first_response_minutes: -1 } } }, 'by_priority.urgent.first_response_minutes'],
      [{ default: { first_response_minutes: 'soon' } }, 'default.first_response_minutes'],
    ] as const) {
      const r = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(
        (r.body.error.issues as { path: string }[]).some((i) => i.path === path),
        `${path}: ${JSON.stringify(r.body)}`,
      );
    }
    const denied = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, { ...as(agent.token), body: { default: { first_response_minutes: 5 } } });
    assert.equal(denied.status, 403);
    assert.deepEqual((await s.request('GET', `/v1/inboxes/${seed.inboxId}/sla`, { token: seed.apiKey })).body, before.body);
  });

  test('without a policy a conversation has no SLA', async () => {
    const id = await mail('nopolicy@cust.example');
    assert.equal(await sla(id), null);
  });

  test('first response, next response and resolution in business hours: warned, breached, met; pending pauses resolution', async () => {
    const put = await s.request('PUT', `/v1/inboxes/${seed.inboxId}/sla`, {
      token: seed.ownerToken,
      body: {
        default: { first_response_minutes: 120, next_response_minutes: 60, resolution_minutes: 480 },
        by_priority: { urgent: { first_response_minutes: 30 } },
      },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.default, { first_response_minutes: 120, next_response_minutes: 60, resolution_minutes: 480 });
    assert.deepEqual(put.body.by_priority.urgent, { first_response_minutes: 30, next_response_minutes: null, resolution_minutes: null });

    // Friday 16:00 Berlin: 60 minutes left this week; Monday opens at 09:00 (08:00Z).
    const id = await mail('ada@cust.example');
    await patch(id, { assignee_id: agent.personId });
    let st = await sla(id);
    assert.equal(st.first_response.due_at, '2026-11-09T09:00:00.000Z', 'Fri 60 min + Mon 60 min');
    assert.equal(st.first_response.warn_at, '2026-11-09T08:36:00.000Z', '80 % of 120 business minutes');
    assert.equal(st.resolution.due_at, '2026-11-09T15:00:00.000Z', 'Fri 60 min + Mon 420 min');
    assert.equal(st.next_response, null);
    const job = await s.app.db.selectFrom('jobs').select('run_at').where('unique_key', '=', `sla.check:${id}`).executeTakeFirstOrThrow();
    assert.equal(job.run_at, '2026-11-09T08:36:00.000Z', 'the check is a stored job for the warning time');

    // The weekend passes: nothing yet at 08:35Z Monday.
    clock.set(new Date('2026-11-09T08:35:00Z'));
    await s.app.jobs.drain();
    assert.deepEqual(await told(id), []);
    clock.set(new Date('2026-11-09T08:36:00Z'));
    await s.app.jobs.drain();
    assert.deepEqual(
      (await told(id)).map((n) => [n.person_id, n.trigger]),
      [[agent.personId, 'sla_warning']],
    );
    clock.set(new Date('2026-11-09T09:00:00Z'));
    // Two checks at once (as two processes would): the breach is recorded and told once.
    await Promise.all([checkSla(s.app, { conversationId: id }), checkSla(s.app, { conversationId: id }), s.app.jobs.drain()]);
    await s.app.jobs.drain();
    await checkSla(s.app, { conversationId: id });
    await s.app.jobs.drain();
    const notes = await told(id);
    assert.deepEqual(
      notes.map((n) => [n.person_id, n.trigger]),
      [
        [agent.personId, 'sla_warning'],
        [agent.personId, 'sla_breached'],
      ],
    );
    assert.match(notes[1].title, /^First response overdue/);
    st = await sla(id);
    assert.equal(st.first_response.breached_at, '2026-11-09T09:00:00.000Z');
    assert.equal(st.first_response.met_at, null);

    // 09:30Z: the reply meets it late; the customer writes again at 10:00Z (11:00 Berlin), answered in time.
    clock.set(new Date('2026-11-09T09:30:00Z'));
    await reply(id);
    st = await sla(id);
    assert.equal(st.first_response.met_at, '2026-11-09T09:30:00.000Z');
    clock.set(new Date('2026-11-09T10:00:00Z'));
    // The customer answers the reply (threaded by its Message-ID).
    const last = (await s.request('GET', `/v1/conversations/${id}/messages?order=desc&limit=5`, { token: seed.apiKey })).body.data.find(
      (m: any) => m.kind === 'message' && m.direction === 'out',
    );
    const followUp = await mail('ada@cust.example', {
      Subject: 'Re: answer',
      'In-Reply-To': `<${last.email.message_id}>`,
      References: `<${last.email.message_id}>`,
    });
    assert.equal(followUp, id, 'the follow-up threads into the conversation');
    st = await sla(id);
    assert.equal(st.next_response.started_at, '2026-11-09T10:00:00.000Z');
    assert.equal(st.next_response.due_at, '2026-11-09T11:00:00.000Z');
    clock.set(new Date('2026-11-09T10:30:00Z'));
    await reply(id);
    st = await sla(id);
    assert.equal(st.next_response.met_at, '2026-11-09T10:30:00.000Z');
    assert.equal(st.next_response.breached_at, null);

    // Pending at 11:00Z (12:00 Berlin): 240 business minutes used. Reopened Tuesday 08:00Z (09:00 Berlin).
    clock.set(new Date('2026-11-09T11:00:00Z'));
    await patch(id, { status: 'pending' });
    st = await sla(id);
    assert.equal(st.resolution.paused, true);
    assert.equal(st.resolution.due_at, null);
    clock.set(new Date('2026-11-10T08:00:00Z'));
    await patch(id, { status: 'open' });
    st = await sla(id);
    assert.equal(st.resolution.paused, false);
    assert.equal(st.resolution.due_at, '2026-11-10T12:00:00.000Z', 'the remaining 240 minutes from Tuesday 09:00');
    clock.set(new Date('2026-11-10T11:00:00Z'));
    await patch(id, { status: 'closed' });
    st = await sla(id);
    assert.equal(st.resolution.met_at, '2026-11-10T11:00:00.000Z');
    assert.equal(st.resolution.breached_at, null);
    assert.deepEqual(
      (await outcomes(id)).map((o) => [o.target, o.outcome, o.member_id]),
      [
        ['first_response', 'breached', agent.personId],
        ['next_response', 'met', agent.personId],
        ['resolution', 'met', agent.personId],
      ],
    );
    await s.app.jobs.drain();
    assert.equal((await told(id)).length, 2, 'nothing more after the close');
  });

  test('a priority with its own targets moves the due time; unassigned breaches tell the inbox members', async () => {
    clock.set(new Date('2026-11-11T08:00:00Z')); // Wednesday 09:00 Berlin
    const id = await mail('urgent@cust.example');
    assert.equal((await sla(id)).first_response.due_at, '2026-11-11T10:00:00.000Z');
    await patch(id, { priority: 'urgent' });
    assert.equal((await sla(id)).first_response.due_at, '2026-11-11T08:30:00.000Z', '30 minutes for urgent');
    clock.set(new Date('2026-11-11T08:30:00Z'));
    await s.app.jobs.drain();
    const members = (await told(id)).filter((n) => n.trigger === 'sla_breached').map((n) => n.person_id);
    assert.deepEqual(members.sort(), [seed.ownerId, agent.personId].sort(), 'every member of the inbox (unassigned)');
  });

  test('an imported conversation never gets due times, whatever happens in it', async () => {
    clock.set(new Date('2026-11-11T09:00:00Z'));
    const id = await mail('history@cust.example');
    // As a migration stores it: imported, without SLA (src/conversations/imported.ts).
    await s.app.db.updateTable('conversations').set({ imported: 1, sla: null, sla_due_at: '9999-12-31T23:59:59.999Z' }).where('id', '=', id).execute();
    await s.app.db.deleteFrom('jobs').where('unique_key', '=', `sla.check:${id}`).execute();
    await patch(id, { priority: 'urgent', assignee_id: agent.personId });
    await reply(id);
    await patch(id, { status: 'pending' });
    await patch(id, { status: 'closed' });
    assert.equal(await sla(id), null);
    assert.deepEqual(await outcomes(id), []);
    const row = await s.app.db.selectFrom('conversations').select('sla_due_at').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.sla_due_at, '9999-12-31T23:59:59.999Z');
    assert.equal((await s.app.db.selectFrom('jobs').select('id').where('unique_key', '=', `sla.check:${id}`).execute()).length, 0);
  });

  test('sort=sla_due lists the earliest due first, nothing due last, and pages by cursor', async () => {
    clock.set(new Date('2026-11-12T08:00:00Z')); // Thursday 09:00 Berlin
    const late = await mail('late@cust.example');
    clock.advance(10 * MINUTE);
    const later = await mail('later@cust.example');
    await patch(later, { priority: 'urgent' }); // due 08:40Z, before `late` (10:00Z)
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await s.request('GET', `/v1/conversations?status=open&sort=sla_due&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: seed.apiKey });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(...r.body.data.map((c: { id: string }) => c.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    const dues = await Promise.all(
      ids.map(async (id) => (await s.app.db.selectFrom('conversations').select('sla_due_at').where('id', '=', id).executeTakeFirstOrThrow()).sla_due_at),
    );
    assert.deepEqual([...dues].sort(), dues, 'due first');
    assert.ok(ids.indexOf(later) < ids.indexOf(late));
    assert.equal(new Set(ids).size, ids.length);
  });

  test('MCP reads the SLA state (conversations:read) and lists conversations due first', async () => {
    clock.set(new Date('2026-11-13T08:00:00Z')); // Friday 09:00 Berlin
    const id = await mail('mcp@cust.example');
    const mcp = await connectMcp(s, seed.apiKey);
    const state = await mcp.call('conversation_sla', { conversation_id: id });
    assert.equal(state.isError, false, state.text);
    assert.equal(state.body.sla.first_response.due_at, '2026-11-13T10:00:00.000Z');
    assert.equal(state.body.policy.default.first_response_minutes, 120);
    assert.deepEqual(state.body.sla, await sla(id));
    const due = await mcp.call('list_sla_due', { limit: 200 });
    const ids = due.body.data.map((c: { id: string }) => c.id);
    const rest = (await s.request('GET', '/v1/conversations?status=open&sort=sla_due&limit=200', { token: seed.apiKey })).body.data.map(
      (c: { id: string }) => c.id,
    );
    assert.deepEqual(ids, rest);
    await mcp.close();
    const narrow = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'contacts only', scopes: ['contacts:read'] })).secret;
    const denied = await connectMcp(s, narrow);
    const refused = await denied.call('conversation_sla', { conversation_id: id });
    assert.equal(refused.isError, true);
    assert.equal(refused.body.error.code, 'forbidden');
    await denied.close();
  });
});
