// Automation actions (issue 36), table-driven: one rule per action on a new customer's mail, and
// what each did to the conversation, its timeline, the mail sink, the notifications and the
// webhook outbox. A rule's reply goes out once per conversation and never to automatic mail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HOUR, iso } from '../../src/platform/clock.js';
import { disableAll, type World, world } from './setup.js';

describe('automation actions', () => {
  let w: World;
  let teamId: string;
  let replyId: string;
  let endpointId: string;

  before(async () => {
    w = await world();
    teamId = (await w.api('POST', '/v1/teams', { name: 'Support', member_ids: [w.agent.personId] })).body.id;
    const reply = await w.api('POST', '/v1/saved-replies', { name: 'Thanks', body: 'Hello {{contact.first_name}}, we got it.', scope: 'workspace' });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    replyId = reply.body.id;
    // A public address as the name service here answers it (nothing is sent in this test).
    w.s.app.lookup = async () => [{ address: '93.184.216.34', family: 4 }];
    const endpoint = await w.api('POST', '/v1/webhooks', { url: 'https://hooks.example.com/svc', events: ['conversation.created'] });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    endpointId = endpoint.body.id;
    const field = await w.api('POST', '/v1/custom-fields', {
      object: 'conversation',
      key: 'plan',
      label: 'Plan',
      type: 'single_select',
      options: ['Basic', 'Pro'],
    });
    assert.equal(field.status, 201, JSON.stringify(field.body));
  });
  after(() => w?.stop());

  const messages = async (id: string) => (await w.api('GET', `/v1/conversations/${id}/messages?order=asc&limit=200`)).body.data as any[];

  const rows: [string, () => Record<string, unknown>, (id: string) => Promise<void>][] = [
    [
      'assign_member',
      () => ({ type: 'assign_member', member_id: w.agent.personId }),
      async (id) => assert.equal((await w.conversation(id)).assignee_id, w.agent.personId),
    ],
    ['assign_team', () => ({ type: 'assign_team', team_id: teamId }), async (id) => assert.equal((await w.conversation(id)).team_id, teamId)],
    ['add_label', () => ({ type: 'add_label', label: 'billing' }), async (id) => assert.deepEqual((await w.conversation(id)).labels, ['billing'])],
    ['set_priority', () => ({ type: 'set_priority', priority: 'urgent' }), async (id) => assert.equal((await w.conversation(id)).priority, 'urgent')],
    ['set_status', () => ({ type: 'set_status', status: 'pending' }), async (id) => assert.equal((await w.conversation(id)).status, 'pending')],
    [
      'snooze',
      () => ({ type: 'snooze', hours: 4 }),
      async (id) => assert.equal((await w.conversation(id)).snoozed_until, iso(new Date(w.clock.now().getTime() + 4 * HOUR))),
    ],
    ['mark_spam', () => ({ type: 'mark_spam' }), async (id) => assert.equal((await w.conversation(id)).spam, true)],
    [
      'set_custom_field',
      () => ({ type: 'set_custom_field', key: 'plan', value: 'Pro' }),
      async (id) => assert.deepEqual((await w.conversation(id)).custom_fields, { plan: 'Pro' }),
    ],
    [
      'add_note',
      () => ({ type: 'add_note', text: 'Check the invoice first.' }),
      async (id) => {
        const note = (await messages(id)).find((m) => m.kind === 'note');
        assert.equal(note?.body, 'Check the invoice first.');
        assert.equal(note?.author.type, 'system');
      },
    ],
    [
      'notify_members',
      () => ({ type: 'notify_members', member_ids: [w.agent.personId] }),
      async (id) => {
        const told = await w.s.app.db.selectFrom('notifications').selectAll().where('conversation_id', '=', id).where('trigger', '=', 'mention').execute();
        assert.deepEqual(
          told.map((n) => [n.person_id, n.trigger]),
          [[w.agent.personId, 'mention']],
        );
        assert.match(told[0].title, /notify_members/);
      },
    ],
    [
      'send_saved_reply',
      () => ({ type: 'send_saved_reply', saved_reply_id: replyId }),
      async (id) => {
        const reply = (await messages(id)).find((m) => m.kind === 'message' && m.direction === 'out');
        assert.equal(reply?.body, 'Hello Ada, we got it.');
        assert.equal(reply?.automatic, true);
        const [mail] = await w.sink.waitFor(1);
        assert.match(mail.raw.toString(), /Hello Ada, we got it\./);
      },
    ],
    [
      'send_webhook',
      () => ({ type: 'send_webhook', endpoint_id: endpointId }),
      async (id) => {
        const events = await w.s.app.db.selectFrom('events').selectAll().where('type', '=', 'automation.webhook').execute();
        assert.equal(events.length, 1);
        assert.equal(JSON.parse(events[0].data).conversation.id, id);
        const deliveries = await w.s.app.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).execute();
        const outbox = await w.s.app.db.selectFrom('webhook_outbox').selectAll().where('event_id', '=', events[0].id).execute();
        assert.equal(deliveries.filter((d) => d.event_seq === events[0].seq).length + outbox.length, 1, 'one delivery to that endpoint');
      },
    ],
  ];

  for (const [name, action, check] of rows)
    test(`action ${name}`, async () => {
      await disableAll(w);
      await w.rule({ name, trigger: { type: 'customer_message' }, actions: [action()] });
      const { conversation_id: id } = await w.mail();
      await w.drain();
      await check(id);
      const [run] = await w.runs(`&conversation_id=${id}`);
      assert.equal(run.outcome, 'acted', JSON.stringify(run));
      assert.deepEqual(run.actions, [action()]);
      assert.equal(run.rule_name, name);
      assert.equal(run.trigger, 'customer_message');
    });

  test('remove_label and auto_assign; actions that change nothing are left out of the log', async () => {
    await disableAll(w);
    const avail = await w.api('PUT', '/v1/me/availability', { availability: 'available' }, w.agent.token);
    assert.equal(avail.status, 200, JSON.stringify(avail.body));
    await w.api('PATCH', `/v1/teams/${teamId}`, { assignment: 'round_robin' });
    await w.rule({
      name: 'tidy',
      trigger: { type: 'conversation_updated' },
      conditions: { match: 'all', items: [{ field: 'label', operator: 'has', value: 'old' }] },
      actions: [
        { type: 'remove_label', label: 'old' },
        { type: 'assign_team', team_id: teamId },
        { type: 'auto_assign' },
        { type: 'set_priority', priority: null },
      ],
    });
    const { conversation_id: id } = await w.mail();
    await w.drain();
    await w.api('PATCH', `/v1/conversations/${id}`, { labels: ['old', 'keep'] });
    await w.drain();
    const c = await w.conversation(id);
    assert.deepEqual(c.labels, ['keep']);
    assert.equal(c.team_id, teamId);
    assert.equal(c.assignee_id, w.agent.personId);
    const acted = (await w.runs(`&conversation_id=${id}`)).filter((r) => r.outcome === 'acted');
    assert.equal(acted.length, 1);
    assert.deepEqual(
      acted[0].actions.map((a: { type: string }) => a.type),
      ['remove_label', 'assign_team', 'auto_assign'],
    );
  });

  test('a rule’s saved reply goes out once per conversation, and never to automatic mail', async () => {
    await disableAll(w);
    const rule = await w.rule({ name: 'ack', trigger: { type: 'customer_message' }, actions: [{ type: 'send_saved_reply', saved_reply_id: replyId }] });
    const before = w.sink.messages.length;
    const first = await w.mail({ 'Message-ID': '<once@customer.example>' });
    await w.drain();
    await w.mail({ Subject: 'Re: again', 'In-Reply-To': '<once@customer.example>', References: '<once@customer.example>' });
    await w.drain();
    await w.sink.waitFor(before + 1);
    const sent = await w.s.app.db.selectFrom('automation_replies_sent').selectAll().where('rule_id', '=', rule.id).execute();
    assert.deepEqual(
      sent.map((r) => r.conversation_id),
      [first.conversation_id],
    );
    const runs = await w.runs(`&conversation_id=${first.conversation_id}`);
    assert.deepEqual(runs.map((r) => `${r.outcome}:${r.reason}`).sort(), ['acted:null', 'no_match:already_sent']);

    const auto = await w.mail({ 'Auto-Submitted': 'auto-replied', Subject: 'Out of office' });
    await w.drain();
    const [autoRun] = await w.runs(`&conversation_id=${auto.conversation_id}`);
    assert.equal(autoRun.outcome, 'no_match');
    assert.equal(autoRun.reason, 'automatic_mail');
    assert.equal((await messages(auto.conversation_id)).filter((m) => m.direction === 'out' && m.kind === 'message').length, 0);
    assert.equal(w.sink.messages.length, before + 1);
  });
  test('a formatted saved reply goes out formatted: html part with the values filled in, plain part its text', async () => {
    await disableAll(w);
    const saved = await w.api('POST', '/v1/saved-replies', {
      name: 'Formatted thanks',
      html: '<p>Hello <strong>{{contact.first_name}}</strong>, we <em>got</em> it.</p>',
      scope: 'workspace',
    });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    await w.rule({ name: 'formatted ack', trigger: { type: 'customer_message' }, actions: [{ type: 'send_saved_reply', saved_reply_id: saved.body.id }] });
    const before = w.sink.messages.length;
    const { conversation_id: id } = await w.mail();
    await w.drain();
    const mail = (await w.sink.waitFor(before + 1))[before];
    assert.match(String(mail.parsed.html), /<strong>Ada<\/strong>/);
    assert.match(String(mail.parsed.text), /Hello .*Ada.*, we got it\./);
    const reply = (await messages(id)).find((m) => m.kind === 'message' && m.direction === 'out');
    assert.match(String(reply?.html), /<em>got<\/em>/);
    await disableAll(w);
  });
});
