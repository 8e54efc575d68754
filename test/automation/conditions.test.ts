// Automation conditions (issue 36), table-driven: every field and operator against one customer
// message of a conversation whose facts are set first; each row is its own rule adding its own
// label, so the labels the conversation ends with say which conditions held. Then all/any.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type World, world } from './setup.js';

describe('automation conditions', () => {
  let w: World;
  let teamId: string;
  let conversationId: string;
  let firstMessageId: string;

  before(async () => {
    w = await world();
    const team = await w.api('POST', '/v1/teams', { name: 'Billing', member_ids: [w.agent.personId] });
    teamId = team.body.id;
    const first = await w.mail({ Subject: 'Invoice overdue', 'Message-ID': '<first@customer.example>' });
    conversationId = first.conversation_id;
    firstMessageId = first.message_id;
    await w.drain();
    const contact = (await w.conversation(conversationId)).contact_id;
    assert.equal((await w.api('PATCH', `/v1/contacts/${contact}`, { attributes: { plan: 'Gold', seats: 12 } })).status, 200);
    const patched = await w.api('PATCH', `/v1/conversations/${conversationId}`, {
      labels: ['vip'],
      priority: 'high',
      assignee_id: w.agent.personId,
      team_id: teamId,
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    // Conversation custom fields (issue 37): a select, a multi-select and a text left empty.
    for (const field of [
      { object: 'conversation', key: 'plan', label: 'Plan', type: 'single_select', options: ['Basic', 'Pro'] },
      { object: 'conversation', key: 'areas', label: 'Areas', type: 'multi_select', options: ['billing', 'api'] },
      { object: 'conversation', key: 'order_ref', label: 'Order', type: 'text' },
    ]) {
      const made = await w.api('POST', '/v1/custom-fields', field);
      assert.equal(made.status, 201, JSON.stringify(made.body));
    }
    const valued = await w.api('PATCH', `/v1/conversations/${conversationId}`, { custom_fields: { plan: 'Pro', areas: ['billing', 'api'] } });
    assert.equal(valued.status, 200, JSON.stringify(valued.body));
    // Closed all day on the clock's weekday (a Sunday), open only on Mondays.
    const hours = await w.api('PUT', `/v1/inboxes/${w.seed.inboxId}/hours`, { weekly: { mon: [{ start: '09:00', end: '17:00' }] }, exceptions: [] });
    assert.equal(hours.status, 200, JSON.stringify(hours.body));
  });
  after(() => w?.stop());

  const inbox = () => w.seed.inboxId;
  const rows: [string, () => Record<string, unknown>, boolean][] = [
    ['inbox is', () => ({ field: 'inbox_id', operator: 'is', value: inbox() }), true],
    ['inbox is_not', () => ({ field: 'inbox_id', operator: 'is_not', value: inbox() }), false],
    ['channel is email', () => ({ field: 'channel_kind', operator: 'is', value: 'email' }), true],
    ['channel is chat', () => ({ field: 'channel_kind', operator: 'is', value: 'chat' }), false],
    ['channel is_not chat', () => ({ field: 'channel_kind', operator: 'is_not', value: 'chat' }), true],
    ['subject contains (any case)', () => ({ field: 'subject', operator: 'contains', value: 'INVOICE' }), true],
    ['subject not_contains', () => ({ field: 'subject', operator: 'not_contains', value: 'invoice' }), false],
    ['subject matches', () => ({ field: 'subject', operator: 'matches', value: '^invoice\\s+over' }), true],
    ['subject matches not', () => ({ field: 'subject', operator: 'matches', value: 'refund\\d' }), false],
    ['body contains', () => ({ field: 'body', operator: 'contains', value: 'Refund' }), true],
    ['body matches', () => ({ field: 'body', operator: 'matches', value: 'order #\\d+' }), true],
    ['body not_contains', () => ({ field: 'body', operator: 'not_contains', value: 'refund' }), false],
    ['sender is', () => ({ field: 'sender_email', operator: 'is', value: 'ADA@customer.example' }), true],
    ['sender contains', () => ({ field: 'sender_email', operator: 'contains', value: 'ada@' }), true],
    ['sender ends_with other', () => ({ field: 'sender_email', operator: 'ends_with', value: '@other.example' }), false],
    ['domain is', () => ({ field: 'sender_domain', operator: 'is', value: 'customer.example' }), true],
    ['domain is_not', () => ({ field: 'sender_domain', operator: 'is_not', value: 'customer.example' }), false],
    ['attribute is', () => ({ field: 'contact_attribute', key: 'plan', operator: 'is', value: 'gold' }), true],
    ['attribute contains', () => ({ field: 'contact_attribute', key: 'seats', operator: 'contains', value: '2' }), true],
    ['attribute exists not', () => ({ field: 'contact_attribute', key: 'missing', operator: 'exists' }), false],
    ['label has', () => ({ field: 'label', operator: 'has', value: 'VIP' }), true],
    ['label has_not', () => ({ field: 'label', operator: 'has_not', value: 'vip' }), false],
    ['priority is', () => ({ field: 'priority', operator: 'is', value: 'high' }), true],
    ['priority is_not', () => ({ field: 'priority', operator: 'is_not', value: 'high' }), false],
    ['status is open', () => ({ field: 'status', operator: 'is', value: 'open' }), true],
    ['status is_not open', () => ({ field: 'status', operator: 'is_not', value: 'open' }), false],
    ['assignee is', () => ({ field: 'assignee_id', operator: 'is', value: w.agent.personId }), true],
    ['unassigned', () => ({ field: 'assignee_id', operator: 'unassigned' }), false],
    ['team is', () => ({ field: 'team_id', operator: 'is', value: teamId }), true],
    ['team none', () => ({ field: 'team_id', operator: 'none' }), false],
    ['outside business hours', () => ({ field: 'business_hours', operator: 'outside' }), true],
    ['inside business hours', () => ({ field: 'business_hours', operator: 'inside' }), false],
    ['custom field is', () => ({ field: 'custom_field', key: 'plan', operator: 'is', value: 'Pro' }), true],
    ['custom field is_not', () => ({ field: 'custom_field', key: 'plan', operator: 'is_not', value: 'Pro' }), false],
    ['custom multi-select is one option', () => ({ field: 'custom_field', key: 'areas', operator: 'is', value: 'api' }), true],
    ['custom field is_empty', () => ({ field: 'custom_field', key: 'order_ref', operator: 'is_empty' }), true],
    ['custom field is_set', () => ({ field: 'custom_field', key: 'order_ref', operator: 'is_set' }), false],
  ];

  test('each field and operator holds exactly where it should', async () => {
    for (const [i, [name, condition]] of rows.entries())
      await w.rule({
        name,
        trigger: { type: 'customer_message' },
        conditions: { match: 'all', items: [condition()] },
        actions: [{ type: 'add_label', label: `row-${i}` }],
      });
    // match any: one true item is enough; match all: one false item is too many.
    await w.rule({
      name: 'any',
      trigger: { type: 'customer_message' },
      conditions: { match: 'any', items: [rows[1][1](), rows[0][1]()] },
      actions: [{ type: 'add_label', label: 'any-hit' }],
    });
    await w.rule({
      name: 'all',
      trigger: { type: 'customer_message' },
      conditions: { match: 'all', items: [rows[0][1](), rows[1][1]()] },
      actions: [{ type: 'add_label', label: 'all-hit' }],
    });
    await w.mail(
      { Subject: 'Re: Invoice overdue', 'In-Reply-To': '<first@customer.example>', References: '<first@customer.example>' },
      'Please refund order #42, thanks.\r\n',
    );
    await w.drain();
    const labels: string[] = (await w.conversation(conversationId)).labels;
    for (const [i, [name, , expected]] of rows.entries()) assert.equal(labels.includes(`row-${i}`), expected, `${name} should ${expected ? '' : 'not '}hold`);
    assert.ok(labels.includes('any-hit'));
    assert.ok(!labels.includes('all-hit'));
    // Each rule logged one run for the message: acted or no_match with its reason.
    const runs = await w.runs(`&conversation_id=${conversationId}`);
    assert.equal(runs.length, rows.length + 2);
    for (const r of runs) assert.ok(r.outcome === 'acted' || (r.outcome === 'no_match' && r.reason === 'conditions_not_met'), JSON.stringify(r));
    assert.ok(firstMessageId);
  });

  test('unsafe or broken patterns and unknown references are refused with the field, and nothing is stored', async () => {
    const before = (await w.api('GET', '/v1/automation/rules')).body.data.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ conditions: { match: 'all', items: [{ field: 'subject', operator: 'matches', value: '(a+)+$' }] } }, 'conditions.items.0.value'],
      [{ conditions: { match: 'all', items: [{ field: 'body', operator: 'matches', value: '(\\w)\\1' }] } }, 'conditions.items.0.value'],
      [{ conditions: { match: 'all', items: [{ field: 'body', operator: 'matches', value: 'a*b*c*' }] } }, 'conditions.items.0.value'],
      [{ conditions: { match: 'all', items: [{ field: 'body', operator: 'matches', value: '(?=x)' }] } }, 'conditions.items.0.value'],
      [{ conditions: { match: 'all', items: [{ field: 'body', operator: 'matches', value: '[unclosed' }] } }, 'conditions.items.0.value'],
      [{ conditions: { match: 'all', items: [{ field: 'inbox_id', operator: 'is', value: 'inb_nope' }] } }, 'conditions.items.0.value'],
      [{ actions: [{ type: 'assign_member', member_id: 'per_nope' }] }, 'actions.0.member_id'],
      [{ actions: [{ type: 'assign_team', team_id: 'team_nope' }] }, 'actions.0.team_id'],
      [{ actions: [{ type: 'send_saved_reply', saved_reply_id: 'sr_nope' }] }, 'actions.0.saved_reply_id'],
      [{ actions: [{ type: 'send_webhook', endpoint_id: 'wh_nope' }] }, 'actions.0.endpoint_id'],
      [{ actions: [{ type: 'notify_members', member_ids: [w.agent.personId, 'per_nope'] }] }, 'actions.0.member_ids.1'],
      [{ conditions: { match: 'all', items: [{ field: 'custom_field', key: 'nope', operator: 'is_set' }] } }, 'conditions.items.0.key'],
      [{ conditions: { match: 'all', items: [{ field: 'custom_field', key: 'plan', operator: 'is', value: 'Gold' }] } }, 'conditions.items.0.value'],
      [{ actions: [{ type: 'set_custom_field', key: 'nope', value: 'x' }] }, 'actions.0.key'],
      [{ actions: [{ type: 'set_custom_field', key: 'plan', value: 'Gold' }] }, 'actions.0.value'],
    ];
    for (const [body, path] of cases) {
      const r = await w.api('POST', '/v1/automation/rules', {
        name: 'bad',
        trigger: { type: 'customer_message' },
        actions: [{ type: 'add_label', label: 'x' }],
        ...body,
      });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(
        r.body.error.issues.some((i: { path: unknown }) => (Array.isArray(i.path) ? i.path.join('.') : i.path) === path),
        `${path}: ${JSON.stringify(r.body)}`,
      );
    }
    // Schema problems (unknown operator, trigger without its number) are 400 too.
    for (const body of [
      { name: 'x', trigger: { type: 'pending_for' }, actions: [{ type: 'mark_spam' }] },
      { name: 'x', trigger: { type: 'customer_message' }, actions: [] },
      {
        name: 'x',
        trigger: { type: 'customer_message' },
        conditions: { match: 'all', items: [{ field: 'status', operator: 'contains', value: 'open' }] },
        actions: [{ type: 'mark_spam' }],
      },
    ]) {
      const r = await w.api('POST', '/v1/automation/rules', body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
    }
    assert.equal((await w.api('GET', '/v1/automation/rules')).body.data.length, before);
  });
});
