// Snooze (issue 35): PATCH snoozed_until, the open list and the Snoozed view, waking at the time or
// at the customer's next message (a stored job, exactly once), events, the timeline line, the
// assignee's notification; the clock is moved, never slept on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type App, buildServices } from '../../src/context.js';
import { HOUR, iso, ManualClock, MINUTE } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { wakeConversation } from '../../src/snooze/service.js';
import { postgresUrl } from '../helpers/db.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, eventsAfter, INGRESS_SECRET, lastEventSeq, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('snooze', () => {
  const clock = new ManualClock(new Date('2026-11-06T15:00:00Z'));
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let agent: { personId: string; token: string };

  before(async () => {
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed)).address!;
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
  });
  after(() => s.stop());

  const get = async (id: string) => (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body;
  const patch = (id: string, body: unknown, token = seed.apiKey) => s.request('PATCH', `/v1/conversations/${id}`, { token, body });
  const ids = async (query: string) =>
    ((await s.request('GET', `/v1/conversations?${query}`, { token: seed.apiKey })).body.data as { id: string }[]).map((c) => c.id);
  const wakeJobs = (id: string) => s.app.db.selectFrom('jobs').selectAll().where('unique_key', '=', `snooze.wake:${id}`).execute();
  const woke = async (after: number, id: string) =>
    (await eventsAfter(s, after)).filter((e) => e.type === 'conversation.updated' && e.data.conversation.id === id && e.data.conversation.snoozed_at === null);

  async function newConversation(messageId = `<${Math.random().toString(36).slice(2)}@customer.example>`) {
    const r = await deliverMail(s, address, { From: 'Ada <ada@customer.example>', Subject: 'Printer', 'Message-ID': messageId });
    await patch(r.conversation_id, { assignee_id: agent.personId });
    return { id: r.conversation_id, messageId };
  }

  test('bad times are refused with the field and change nothing', async () => {
    const { id } = await newConversation();
    const before = await get(id);
    for (const [value, path] of [
      [iso(new Date(clock.now().getTime() - MINUTE)), 'snoozed_until'],
      [iso(new Date(clock.now().getTime() + 3 * 366 * 24 * HOUR)), 'snoozed_until'],
      ['tomorrow', 'snoozed_until'],
      [42, 'snoozed_until'],
    ] as const) {
      const r = await patch(id, { snoozed_until: value });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(
        (r.body.error.issues as { path: string }[]).some((i) => i.path === path),
        JSON.stringify(r.body),
      );
    }
    assert.deepEqual(await get(id), before);
    assert.equal((await wakeJobs(id)).length, 0);
  });

  test('a timed snooze leaves the open list, shows in the Snoozed view and wakes at its time, once, with the assignee told', async () => {
    const { id } = await newConversation();
    const seq = await lastEventSeq(s);
    const until = new Date(clock.now().getTime() + 2 * HOUR);
    const r = await patch(
      id,
      { snoozed_until: until.toISOString() },
      (await addPerson(s.app, seed.workspaceId, 'agent', `ana-${Date.now()}@team.example`)).token,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.snoozed_until, iso(until));
    assert.equal(r.body.snoozed_at, iso(clock.now()));
    assert.equal(r.body.status, 'open');

    assert.ok(!(await ids('status=open&limit=200')).includes(id), 'left the open list');
    assert.ok((await ids('snoozed=true&limit=200')).includes(id), 'in the Snoozed view');
    assert.ok(!(await ids('snoozed=false&limit=200')).includes(id));

    const events = await eventsAfter(s, seq);
    const snoozed = events.find((e) => e.type === 'conversation.updated' && e.data.conversation.id === id);
    assert.equal(snoozed?.data.conversation.snoozed_until, iso(until));
    const messages = (await s.request('GET', `/v1/conversations/${id}/messages?order=asc`, { token: seed.apiKey })).body.data as any[];
    const line = messages.filter((m) => m.kind === 'event').at(-1);
    assert.deepEqual(line.details.changes.snoozed_until, { from: null, to: iso(until) });
    assert.equal(line.author.type, 'member');

    const [job] = await wakeJobs(id);
    assert.equal(job.run_at, iso(until), 'the wake-up is a stored job for the snooze time');

    // Before the time nothing wakes.
    clock.advance(HOUR);
    await s.app.jobs.drain();
    assert.equal((await get(id)).snoozed_until, iso(until));

    clock.set(until);
    await s.app.jobs.drain();
    const now = await get(id);
    assert.equal(now.status, 'open');
    assert.equal(now.snoozed_until, null);
    assert.equal(now.snoozed_at, null);
    assert.ok((await ids('status=open&limit=200')).includes(id), 'back in the open list');
    const wakeEvents = await woke(seq, id);
    assert.equal(wakeEvents.length, 1);
    const last = ((await s.request('GET', `/v1/conversations/${id}/messages?order=asc`, { token: seed.apiKey })).body.data as any[]).at(-1);
    assert.equal(last.kind, 'event');
    assert.equal(last.details.reason, 'snooze_ended');
    assert.equal(last.author.type, 'system');
    assert.equal((await wakeJobs(id)).length, 0);

    const told = await s.app.db.selectFrom('notifications').selectAll().where('conversation_id', '=', id).where('trigger', '=', 'snooze_ended').execute();
    assert.deepEqual(
      told.map((n) => n.person_id),
      [agent.personId],
    );

    // Later runs change nothing (the job is gone; a stray one finds nothing snoozed).
    clock.advance(HOUR);
    await s.app.jobs.drain();
    assert.equal((await wakeConversation(s.app, { workspaceId: seed.workspaceId, conversationId: id })).done, 'not_snoozed');
    assert.equal((await woke(seq, id)).length, 1);
  });

  test('until the customer answers: automatic mail does not wake it, the customer’s reply does', async () => {
    const { id, messageId } = await newConversation();
    const seq = await lastEventSeq(s);
    const r = await patch(id, { snoozed_until: 'customer_reply', status: 'pending' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.snoozed_until, 'customer_reply');
    assert.equal((await wakeJobs(id)).length, 0, 'no time, no job yet');

    await deliverMail(s, address, { From: 'Ada <ada@customer.example>', Subject: 'Re: Printer', 'In-Reply-To': messageId, 'Auto-Submitted': 'auto-replied' });
    await s.app.jobs.drain();
    assert.equal((await get(id)).snoozed_until, 'customer_reply');

    clock.advance(10 * MINUTE);
    await deliverMail(s, address, { From: 'Ada <ada@customer.example>', Subject: 'Re: Printer', 'In-Reply-To': messageId });
    assert.equal((await wakeJobs(id)).length, 1, 'the reply stored the wake-up in its own transaction');
    await s.app.jobs.drain();
    const now = await get(id);
    assert.equal(now.status, 'open');
    assert.equal(now.snoozed_until, null);
    const wakes = await woke(seq, id);
    assert.equal(wakes.length, 1);
    const line = ((await s.request('GET', `/v1/conversations/${id}/messages?order=asc`, { token: seed.apiKey })).body.data as any[]).filter(
      (m) => m.kind === 'event',
    );
    assert.equal(line.at(-1).details.reason, 'customer_reply');
    assert.deepEqual(line.at(-1).details.changes.status, { from: 'pending', to: 'open' });
  });

  test('a timed snooze ends at the customer’s reply when it comes first; the time later wakes nothing', async () => {
    const { id, messageId } = await newConversation();
    const seq = await lastEventSeq(s);
    const until = new Date(clock.now().getTime() + 24 * HOUR);
    assert.equal((await patch(id, { snoozed_until: until.toISOString() })).status, 200);
    clock.advance(HOUR);
    await deliverMail(s, address, { From: 'Ada <ada@customer.example>', Subject: 'Re: Printer', 'In-Reply-To': messageId });
    await s.app.jobs.drain();
    assert.equal((await get(id)).snoozed_until, null);
    clock.set(new Date(until.getTime() + MINUTE));
    await s.app.jobs.drain();
    assert.equal((await woke(seq, id)).length, 1);
  });

  test('snoozed again for later: the earlier job waits for the new time; sooner: it is brought forward; null wakes it now', async () => {
    const { id } = await newConversation();
    const seq = await lastEventSeq(s);
    const first = new Date(clock.now().getTime() + HOUR);
    const later = new Date(clock.now().getTime() + 5 * HOUR);
    await patch(id, { snoozed_until: first.toISOString() });
    await patch(id, { snoozed_until: later.toISOString() });
    clock.set(first);
    await s.app.jobs.drain();
    assert.equal((await get(id)).snoozed_until, iso(later));
    assert.equal((await wakeJobs(id))[0].run_at, iso(later));

    const sooner = new Date(clock.now().getTime() + 30 * MINUTE);
    await patch(id, { snoozed_until: sooner.toISOString() });
    assert.equal((await wakeJobs(id))[0].run_at, iso(sooner));
    clock.set(sooner);
    await s.app.jobs.drain();
    assert.equal((await get(id)).snoozed_until, null);
    assert.equal((await woke(seq, id)).length, 1);

    await patch(id, { snoozed_until: new Date(clock.now().getTime() + HOUR).toISOString() });
    const r = await patch(id, { snoozed_until: null });
    assert.equal(r.body.snoozed_until, null);
    const line = ((await s.request('GET', `/v1/conversations/${id}/messages?order=asc`, { token: seed.apiKey })).body.data as any[]).at(-1);
    assert.equal(line.details.changes.snoozed_until.to, null);
    assert.equal(line.details.reason, undefined, 'woken by a person: no reason, the author says who');
  });

  test('unread counts leave snoozed conversations out', async () => {
    const { id } = await newConversation();
    const me = await addPerson(s.app, seed.workspaceId, 'agent');
    const before = (await s.request('GET', '/v1/overview', { token: me.token })).body;
    await patch(id, { snoozed_until: 'customer_reply' });
    const after = (await s.request('GET', '/v1/overview', { token: me.token })).body;
    assert.ok(before.unread.all >= 1, JSON.stringify(before));
    assert.equal(after.unread.all, before.unread.all - 1);
  });

  test('two servers waking the same conversation at once wake it once', async () => {
    const { id } = await newConversation();
    const seq = await lastEventSeq(s);
    await patch(id, { snoozed_until: new Date(clock.now().getTime() + HOUR).toISOString() });
    clock.advance(HOUR);
    // A second server on the same database on Postgres (several processes share one Postgres; on
    // SQLite one server runs, and its concurrent wake-ups share its connection).
    const other: App = postgresUrl ? buildServices(loadConfig(s.env), { log: createLogger({ level: 'error', write: () => {} }), clock }) : s.app;
    try {
      const payload = { workspaceId: seed.workspaceId, conversationId: id };
      const outcomes = await Promise.all([wakeConversation(s.app, payload), wakeConversation(other, payload), wakeConversation(s.app, payload)]);
      assert.equal(outcomes.filter((o) => 'done' in o && o.done === 'snooze_ended').length, 1, JSON.stringify(outcomes));
      await Promise.all([s.app.jobs.drain(), other.jobs.drain()]);
    } finally {
      if (other !== s.app) await other.close();
    }
    assert.equal((await woke(seq, id)).length, 1);
  });
});
