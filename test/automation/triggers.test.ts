// Automation triggers (issue 36): the event triggers, table-driven, and the time-based ones as
// stored jobs checked with the moved clock (never slept on): due at the state's start plus N, acting
// only when the state lasted. Also the loop guard and a job run twice acting once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RUN_JOB } from '../../src/automation/reaction.js';
import { DAY, HOUR, iso, MINUTE } from '../../src/platform/clock.js';
import { disableAll, type World, world } from './setup.js';

describe('automation triggers', () => {
  let w: World;
  before(async () => {
    w = await world();
  });
  after(() => w?.stop());

  const label = (trigger: Record<string, unknown>, name: string) => w.rule({ name, trigger, actions: [{ type: 'add_label', label: name }] });
  const labels = async (id: string) => (await w.conversation(id)).labels as string[];
  const timers = () => w.s.app.db.selectFrom('jobs').selectAll().where('kind', '=', 'automation.timer').execute();

  const rows: [string, (id: string) => Promise<void>][] = [
    ['conversation_created', async () => {}],
    ['customer_message', async () => {}],
    ['team_message', async (id) => void (await w.api('POST', `/v1/conversations/${id}/messages`, { kind: 'note', body: 'a note is not a message' }))],
    ['conversation_updated', async (id) => void (await w.api('PATCH', `/v1/conversations/${id}`, { priority: 'low' }))],
  ];

  test('event triggers start only their rules', async () => {
    for (const [name] of rows) await label({ type: name }, name);
    const { conversation_id: id } = await w.mail();
    await w.drain();
    assert.deepEqual((await labels(id)).sort(), ['conversation_created', 'conversation_updated', 'customer_message'].sort());
    // A note is not a team message; the rule's own label change did start conversation_updated once.
    const runs = await w.runs(`&conversation_id=${id}`);
    assert.ok(!runs.some((r) => r.trigger === 'team_message'));
    await w.api('PATCH', `/v1/conversations/${id}`, { labels: [] });
    await w.drain();
    for (const [name, act] of rows) await act(id);
    await w.drain();
    assert.deepEqual(await labels(id), ['conversation_updated'], 'a note starts nothing, the change does');
    // A team reply (by a key) does start team_message; the channel has SMTP, so it is mailed.
    const reply = await w.api('POST', `/v1/conversations/${id}/messages`, { kind: 'message', body: 'On it.' });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    await w.drain();
    assert.ok((await labels(id)).includes('team_message'));
    await disableAll(w);
  });

  test('pending for N hours: a job at the start plus N; acts only if still pending since then', async () => {
    const rule = await label({ type: 'pending_for', hours: 3 }, 'stale');
    const a = (await w.mail()).conversation_id;
    const b = (await w.mail()).conversation_id;
    await w.drain();
    const start = w.clock.now();
    await w.api('PATCH', `/v1/conversations/${a}`, { status: 'pending' });
    await w.api('PATCH', `/v1/conversations/${b}`, { status: 'pending' });
    await w.drain();
    const jobs = (await timers()).filter((j) => JSON.parse(j.payload as unknown as string).ruleId === rule.id);
    assert.equal(jobs.length, 2);
    for (const j of jobs) assert.equal(j.run_at, iso(new Date(start.getTime() + 3 * HOUR)));
    w.clock.advance(HOUR);
    // b leaves pending and comes back: its first timer finds the state changed; the second one counts from the return.
    await w.api('PATCH', `/v1/conversations/${b}`, { status: 'open' });
    await w.api('PATCH', `/v1/conversations/${b}`, { status: 'pending' });
    w.clock.advance(2 * HOUR - MINUTE);
    await w.drain();
    assert.deepEqual(await labels(a), [], 'not yet');
    w.clock.advance(MINUTE);
    await w.drain();
    assert.deepEqual(await labels(a), ['stale']);
    assert.deepEqual(await labels(b), []);
    const bRuns = await w.runs(`&conversation_id=${b}&rule_id=${rule.id}`);
    assert.deepEqual(
      bRuns.map((r) => `${r.outcome}:${r.reason}`),
      ['skipped:state_changed'],
    );
    w.clock.advance(HOUR);
    await w.drain();
    assert.deepEqual(await labels(b), ['stale']);
    await disableAll(w);
  });

  test('open and unassigned for N minutes; assigning in time stops it', async () => {
    await label({ type: 'open_unassigned_for', minutes: 30 }, 'waiting');
    const a = (await w.mail()).conversation_id;
    const b = (await w.mail()).conversation_id;
    await w.drain();
    w.clock.advance(10 * MINUTE);
    await w.api('PATCH', `/v1/conversations/${b}`, { assignee_id: w.agent.personId });
    w.clock.advance(20 * MINUTE);
    await w.drain();
    assert.deepEqual(await labels(a), ['waiting']);
    assert.deepEqual(await labels(b), []);
    await disableAll(w);
  });

  test('no customer answer for N days after the team wrote; a customer reply stops it', async () => {
    await label({ type: 'no_customer_answer_for', days: 2 }, 'chase');
    const a = await w.mail({ 'Message-ID': '<na-a@customer.example>' });
    const b = await w.mail({ 'Message-ID': '<na-b@customer.example>' });
    await w.drain();
    for (const c of [a, b]) await w.api('POST', `/v1/conversations/${c.conversation_id}/messages`, { kind: 'message', body: 'Does it work now?' });
    await w.drain();
    w.clock.advance(DAY);
    await w.mail({ Subject: 'Re: yes', 'In-Reply-To': '<na-b@customer.example>', References: '<na-b@customer.example>' });
    w.clock.advance(DAY);
    await w.drain();
    assert.deepEqual(await labels(a.conversation_id), ['chase']);
    assert.deepEqual(await labels(b.conversation_id), []);
    await disableAll(w);
  });

  test('loop guard: two rules undoing each other stop at the depth limit, logged', async () => {
    await w.rule({
      name: 'A',
      trigger: { type: 'conversation_updated' },
      actions: [
        { type: 'add_label', label: 'x' },
        { type: 'remove_label', label: 'y' },
      ],
    });
    await w.rule({
      name: 'B',
      trigger: { type: 'conversation_updated' },
      actions: [
        { type: 'add_label', label: 'y' },
        { type: 'remove_label', label: 'x' },
      ],
    });
    const { conversation_id: id } = await w.mail();
    await w.drain();
    await w.api('PATCH', `/v1/conversations/${id}`, { priority: 'high' });
    await w.drain();
    const runs = await w.runs(`&conversation_id=${id}`);
    const guarded = runs.filter((r) => r.outcome === 'skipped' && String(r.reason).startsWith('loop_guard'));
    assert.ok(guarded.length > 0, JSON.stringify(runs));
    assert.ok(runs.length <= 2 * 4, `bounded: ${runs.length} runs`);
    assert.equal((await w.s.app.db.selectFrom('jobs').select('id').where('kind', '=', RUN_JOB).execute()).length, 0);
    await disableAll(w);
  });

  test('a run job done twice (a crash before its removal) acts and logs once', async () => {
    const rule = await w.rule({ name: 'once', trigger: { type: 'customer_message' }, actions: [{ type: 'add_note', text: 'seen' }] });
    const { conversation_id: id } = await w.mail();
    const [job] = await w.s.app.db.selectFrom('jobs').selectAll().where('kind', '=', RUN_JOB).execute();
    const payload = typeof job.payload === 'string' ? JSON.parse(job.payload) : job.payload;
    const { runEventRules } = await import('../../src/automation/engine.js');
    await runEventRules(w.s.app, payload);
    await w.drain();
    const notes = ((await w.api('GET', `/v1/conversations/${id}/messages?limit=200`)).body.data as any[]).filter((m) => m.kind === 'note');
    assert.equal(notes.length, 1);
    assert.equal((await w.runs(`&rule_id=${rule.id}`)).length, 1);
    await disableAll(w);
  });
  test('a batch of run jobs: a later event of the same conversation sees what an earlier run changed', async () => {
    const rule = await w.rule({
      name: 'greet once',
      trigger: { type: 'customer_message' },
      conditions: { match: 'all', items: [{ field: 'label', operator: 'has_not', value: 'greeted' }] },
      actions: [
        { type: 'add_label', label: 'greeted' },
        { type: 'add_note', text: 'greeted' },
      ],
    });
    // Three mails before any job runs: two in one conversation (a reply by References), one alone.
    const first = await w.mail({ 'Message-ID': '<batch-1@customer.example>' });
    const reply = await w.mail({
      'Message-ID': '<batch-2@customer.example>',
      'In-Reply-To': '<batch-1@customer.example>',
      References: '<batch-1@customer.example>',
    });
    const other = await w.mail({ 'Message-ID': '<batch-3@customer.example>' });
    assert.equal(reply.conversation_id, first.conversation_id);
    assert.notEqual(other.conversation_id, first.conversation_id);
    assert.equal((await w.s.app.db.selectFrom('jobs').select('id').where('kind', '=', RUN_JOB).execute()).length, 3);
    await w.drain();
    const notes = async (id: string) =>
      ((await w.api('GET', `/v1/conversations/${id}/messages?limit=200`)).body.data as any[]).filter((m) => m.kind === 'note').length;
    assert.equal(await notes(first.conversation_id), 1, 'the second event saw the label the first run added');
    assert.equal(await notes(other.conversation_id), 1);
    const runs = await w.runs(`&rule_id=${rule.id}`);
    const outcomes = runs.filter((r) => r.conversation_id === first.conversation_id).map((r) => r.outcome);
    assert.deepEqual(outcomes.sort(), ['acted', 'no_match']);
    await disableAll(w);
  });
});
