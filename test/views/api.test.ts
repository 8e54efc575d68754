// Saved views (issue 37) against the real server: every filter condition as a query parameter on
// GET /v1/conversations and as a view (?view=, the same answer), the counts of every view a member
// sees, who may make and change personal and shared views, reordering, and bad input (400, nothing
// stored). The current list parameters keep working.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Person = Awaited<ReturnType<typeof addPerson>>;

describe('saved views API', () => {
  let s: TestServer;
  let seed: Seed;
  let admin: Person;
  let agent: Person;
  let agent2: Person;
  let inboxB: string;
  let teamId: string;
  /** Conversations by name, each with one trait the filters pick out. */
  const cv: Record<string, string> = {};

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    admin = await addPerson(s.app, seed.workspaceId, 'admin');
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    agent2 = await addPerson(s.app, seed.workspaceId, 'agent');
    const address = (await seedEmailChannel(s.app, seed)).address!;
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' })).id;
    for (const name of [
      'plain',
      'mine',
      'urgent',
      'labelled',
      'both',
      'closed',
      'snoozed',
      'breached',
      'running',
      'imported',
      'old',
      'vip',
      'refund',
      'inB',
      'chat',
      'team',
    ]) {
      cv[name] = (
        await deliverMail(
          s,
          address,
          { Subject: `About ${name === 'refund' ? 'a Refund_100%' : name}`, From: `${name}@customer.test` },
          `Hello from ${name}.\r\n`,
        )
      ).conversation_id;
    }
    const patch = async (name: string, body: object) => {
      const r = await s.request('PATCH', `/v1/conversations/${cv[name]}`, { token: seed.ownerToken, body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    };
    const team = await s.request('POST', '/v1/teams', { token: admin.token, body: { name: 'Tier 2', member_ids: [agent.personId] } });
    teamId = team.body.id;
    await patch('mine', { assignee_id: agent.personId });
    await patch('urgent', { priority: 'urgent', assignee_id: agent2.personId });
    await patch('labelled', { labels: ['billing'] });
    await patch('both', { labels: ['billing', 'vip'] });
    await patch('closed', { status: 'closed' });
    await patch('snoozed', { snoozed_until: 'customer_reply' });
    await patch('team', { team_id: teamId });
    const db = s.app.db;
    const set = (name: string, values: Record<string, unknown>) => db.updateTable('conversations').set(values).where('id', '=', cv[name]).execute();
    const now = Date.now();
    await set('breached', { sla_due_at: new Date(now - 3_600_000).toISOString() });
    await set('running', { sla_due_at: new Date(now + 3_600_000).toISOString() });
    await set('imported', { imported: 1 });
    await set('old', { created_at: '2020-01-01T00:00:00.000Z', last_message_at: '2020-01-02T00:00:00.000Z' });
    await set('inB', { inbox_id: inboxB });
    await set('chat', { source: 'chat' });
    const contact = (await s.request('GET', `/v1/conversations/${cv.vip}`, { token: seed.ownerToken })).body.contact_id;
    const c = await s.request('PATCH', `/v1/contacts/${contact}`, { token: seed.ownerToken, body: { attributes: { plan: 'Enterprise', seats: 40 } } });
    assert.equal(c.status, 200, JSON.stringify(c.body));
  });
  after(() => s.stop());

  const names = (ids: string[]) => ids.map((id) => Object.keys(cv).find((k) => cv[k] === id) ?? id).sort();
  const list = async (query: string, token = seed.ownerToken) => {
    const r = await s.request('GET', `/v1/conversations?limit=200&${query}`, { token });
    assert.equal(
      r.status,
      200,
      `${query}: ${JSON.stringify(r.body)} ${r.status === 500 ? JSON.stringify(s.logs.filter((l) => l.level === 'error').at(-1)) : ''}`,
    );
    return names(r.body.data.map((x: any) => x.id));
  };
  const open = ['both', 'breached', 'chat', 'imported', 'inB', 'labelled', 'mine', 'old', 'plain', 'refund', 'running', 'team', 'urgent', 'vip'];

  const cases: { query: string; filters: object; expect: string[]; token?: () => string }[] = [
    { query: 'status=open', filters: { status: ['open'] }, expect: open },
    { query: 'status=closed,pending', filters: { status: ['closed', 'pending'] }, expect: ['closed'] },
    { query: `inbox_id=${'B'}`, filters: { inbox_id: ['B'] }, expect: ['inB'] },
    { query: 'channel_kind=chat', filters: { channel_kind: ['chat'] }, expect: ['chat'] },
    { query: 'assignee_id=me', filters: { assignee_id: ['me'] }, expect: ['mine'], token: () => agent.token },
    { query: 'status=open&assignee_id=none', filters: { status: ['open'], assignee_id: ['none'] }, expect: open.filter((n) => n !== 'mine' && n !== 'urgent') },
    { query: 'assignee_id=me,AGENT2', filters: { assignee_id: ['me', 'AGENT2'] }, expect: ['mine', 'urgent'], token: () => agent.token },
    { query: 'team_id=mine', filters: { team_id: ['mine'] }, expect: ['team'], token: () => agent.token },
    { query: 'team_id=TEAM', filters: { team_id: ['TEAM'] }, expect: ['team'] },
    { query: 'label_any=vip&label_any=billing', filters: { label: { any: ['vip', 'billing'] } }, expect: ['both', 'labelled'] },
    { query: 'label_all=vip&label_all=billing', filters: { label: { all: ['vip', 'billing'] } }, expect: ['both'] },
    { query: 'status=open&label_none=vip', filters: { status: ['open'], label: { none: ['vip'] } }, expect: open.filter((n) => n !== 'both') },
    { query: 'priority=urgent,high', filters: { priority: ['urgent', 'high'] }, expect: ['urgent'] },
    { query: 'status=open&priority=none', filters: { status: ['open'], priority: ['none'] }, expect: open.filter((n) => n !== 'urgent') },
    { query: 'snoozed=true', filters: { snoozed: true }, expect: ['snoozed'] },
    { query: 'sla=breached', filters: { sla: 'breached' }, expect: ['breached'] },
    { query: 'sla=running', filters: { sla: 'running' }, expect: ['running'] },
    { query: 'imported=true', filters: { imported: true }, expect: ['imported'] },
    { query: 'created_before=2021-01-01T00:00:00Z', filters: { created: { before: '2021-01-01T00:00:00Z' } }, expect: ['old'] },
    {
      query: 'activity_after=2020-01-01T12:00:00%2B02:00&activity_before=2020-01-03T00:00:00Z',
      filters: { last_activity: { after: '2020-01-01T12:00:00+02:00', before: '2020-01-03T00:00:00Z' } },
      expect: ['old'],
    },
    {
      query: 'contact_attribute=plan&contact_attribute_value=Enterprise',
      filters: { contact_attribute: { key: 'plan', op: 'eq', value: 'Enterprise' } },
      expect: ['vip'],
    },
    {
      query: 'contact_attribute=seats&contact_attribute_op=eq&contact_attribute_value=40',
      filters: { contact_attribute: { key: 'seats', op: 'eq', value: '40' } },
      expect: ['vip'],
    },
    {
      query: 'contact_attribute=plan&contact_attribute_op=contains&contact_attribute_value=terp',
      filters: { contact_attribute: { key: 'plan', op: 'contains', value: 'terp' } },
      expect: ['vip'],
    },
    {
      query: 'status=open&contact_attribute=plan&contact_attribute_op=absent',
      filters: { status: ['open'], contact_attribute: { key: 'plan', op: 'absent' } },
      expect: open.filter((n) => n !== 'vip'),
    },
    { query: 'q=refund_100%25', filters: { text: 'refund_100%' }, expect: ['refund'] },
    { query: 'q=_1', filters: { text: '_1' }, expect: ['refund'] },
    { query: 'q=hello%20from%20CHAT', filters: { text: 'hello from CHAT' }, expect: ['chat'] },
  ];
  const fill = (text: string) =>
    text
      .replaceAll('AGENT2', agent2.personId)
      .replaceAll('TEAM', teamId)
      .replace(/^inbox_id=B$/, `inbox_id=${inboxB}`);
  const fillFilters = (f: object) => JSON.parse(fill(JSON.stringify(f)).replace('"inbox_id":["B"]', `"inbox_id":["${inboxB}"]`));

  test('each condition as query parameters and as a saved view (?view=) lists the same conversations', async () => {
    for (const c of cases) {
      const token = c.token?.() ?? seed.ownerToken;
      assert.deepEqual(await list(fill(c.query), token), [...c.expect].sort(), c.query);
      const made = await s.request('POST', '/v1/views', { token, body: { name: c.query.slice(0, 80), filters: fillFilters(c.filters) } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.deepEqual(await list(`view=${made.body.id}`, token), [...c.expect].sort(), `view ${c.query}`);
      const counts = await s.request('GET', '/v1/views/counts', { token });
      assert.equal(counts.body.data.find((x: any) => x.id === made.body.id).count, c.expect.length, `count ${c.query}`);
      assert.equal((await s.request('DELETE', `/v1/views/${made.body.id}`, { token })).status, 204);
    }
  });

  test('conditions combine (AND), query parameters narrow a view, and the view’s sort applies', async () => {
    const v = await s.request('POST', '/v1/views', {
      token: seed.ownerToken,
      body: {
        name: 'Billing, open, unassigned',
        filters: { status: ['open'], label: { any: ['billing', 'vip'] }, assignee_id: ['none'], priority: ['none'], inbox_id: [seed.inboxId] },
        sort: 'created',
      },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    const r = await s.request('GET', `/v1/conversations?view=${v.body.id}`, { token: seed.ownerToken });
    assert.deepEqual(names(r.body.data.map((x: any) => x.id)), ['both', 'labelled']);
    assert.deepEqual(
      r.body.data.map((x: any) => x.id),
      [cv.both, cv.labelled],
      'created: newest first',
    );
    assert.deepEqual(await list(`view=${v.body.id}&label_none=vip`), ['labelled']);
    // A spam conversation leaves every view unless the view asks for spam.
    await s.request('PATCH', `/v1/conversations/${cv.labelled}`, { token: seed.ownerToken, body: { spam: true } });
    assert.deepEqual(await list(`view=${v.body.id}`), ['both']);
    await s.request('PATCH', `/v1/conversations/${cv.labelled}`, { token: seed.ownerToken, body: { spam: false } });
    await s.request('DELETE', `/v1/views/${v.body.id}`, { token: seed.ownerToken });
  });

  test('a view keeps custom field conditions (checked when saved); a field deleted later leaves it empty', async () => {
    const field = await s.request('POST', '/v1/custom-fields', {
      token: seed.ownerToken,
      body: { object: 'conversation', key: 'tier', label: 'Tier', type: 'single_select', options: ['Gold', 'Silver'] },
    });
    assert.equal(field.status, 201, JSON.stringify(field.body));
    for (const [name, tier] of [
      ['vip', 'Gold'],
      ['both', 'Silver'],
    ]) {
      const set = await s.request('PATCH', `/v1/conversations/${cv[name]}`, { token: seed.ownerToken, body: { custom_fields: { tier } } });
      assert.equal(set.status, 200, JSON.stringify(set.body));
    }
    const refused = await s.request('POST', '/v1/views', {
      token: seed.ownerToken,
      body: { name: 'x', filters: { custom_fields: [{ key: 'tier', value: 'Bronze' }] } },
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.issues[0].path, 'custom_field.tier');
    const v = await s.request('POST', '/v1/views', {
      token: seed.ownerToken,
      body: { name: 'Gold', filters: { custom_fields: [{ key: 'tier', value: 'Gold' }] } },
    });
    assert.equal(v.status, 201, JSON.stringify(v.body));
    assert.deepEqual(await list(`view=${v.body.id}`), ['vip']);
    assert.deepEqual(await list('custom_field.tier=Gold'), ['vip'], 'the same as the query parameter');
    const counts = await s.request('GET', '/v1/views/counts', { token: seed.ownerToken });
    assert.equal(counts.body.data.find((x: any) => x.id === v.body.id).count, 1);
    assert.equal((await s.request('DELETE', `/v1/custom-fields/${field.body.id}`, { token: seed.ownerToken })).status, 200);
    assert.deepEqual(await list(`view=${v.body.id}`), []);
    await s.request('DELETE', `/v1/views/${v.body.id}`, { token: seed.ownerToken });
  });

  test('personal views are their owner’s; shared ones are made and changed by owners and admins only', async () => {
    const mine = await s.request('POST', '/v1/views', { token: agent.token, body: { name: ' Mine ', filters: { assignee_id: ['me'] } } });
    assert.equal(mine.status, 201);
    assert.equal(mine.body.name, 'Mine');
    assert.equal(mine.body.shared, false);
    assert.equal(mine.body.editable, true);
    assert.equal(mine.body.sort, 'activity');
    const refused = await s.request('POST', '/v1/views', { token: agent.token, body: { name: 'Team', shared: true } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'forbidden');
    const shared = await s.request('POST', '/v1/views', { token: admin.token, body: { name: 'Urgent', shared: true, filters: { priority: ['urgent'] } } });
    assert.equal(shared.status, 201);
    assert.equal(shared.body.shared, true);
    const byKey = await s.request('POST', '/v1/views', { token: seed.apiKey, body: { name: 'From the API', filters: { sla: 'breached' } } });
    assert.equal(byKey.status, 201, JSON.stringify(byKey.body));
    assert.equal(byKey.body.shared, true);
    assert.equal((await s.request('POST', '/v1/views', { token: seed.apiKey, body: { name: 'x', shared: false } })).status, 403);

    // The agent sees the shared ones first, then their own; nobody else sees the agent's.
    const agentViews = await s.request('GET', '/v1/views', { token: agent.token });
    assert.deepEqual(
      agentViews.body.data.map((v: any) => [v.name, v.shared, v.editable]),
      [
        ['Urgent', true, false],
        ['From the API', true, false],
        ['Mine', false, true],
      ],
    );
    assert.deepEqual(
      (await s.request('GET', '/v1/views', { token: agent2.token })).body.data.map((v: any) => v.name),
      ['Urgent', 'From the API'],
    );
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'Stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await s.request(method, `/v1/views/${mine.body.id}`, { token: agent2.token, body });
      assert.equal(r.status, 404, `${method} another's personal view`);
    }
    assert.equal((await s.request('GET', `/v1/conversations?view=${mine.body.id}`, { token: agent2.token })).status, 404);
    assert.equal((await s.request('PATCH', `/v1/views/${shared.body.id}`, { token: agent.token, body: { name: 'Mine now' } })).status, 403);
    assert.equal((await s.request('DELETE', `/v1/views/${shared.body.id}`, { token: agent.token })).status, 403);
    assert.equal((await s.request('PATCH', `/v1/views/${mine.body.id}`, { token: agent.token, body: { shared: true } })).status, 403);
    assert.equal((await s.request('GET', `/v1/views/${mine.body.id}`, { token: agent.token })).body.shared, false, 'unchanged');

    // The owner shares a personal view of theirs; an admin renames a shared one.
    const own = await s.request('POST', '/v1/views', { token: seed.ownerToken, body: { name: 'Closed', filters: { status: ['closed'] } } });
    const sharedNow = await s.request('PATCH', `/v1/views/${own.body.id}`, { token: seed.ownerToken, body: { shared: true } });
    assert.equal(sharedNow.body.shared, true);
    assert.equal(sharedNow.body.position, 2, 'last of the shared ones');
    const renamed = await s.request('PATCH', `/v1/views/${shared.body.id}`, { token: admin.token, body: { name: 'Urgent ones', sort: 'sla_due' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.sort, 'sla_due');

    // Counts: every view the member sees, in sidebar order.
    const counts = await s.request('GET', '/v1/views/counts', { token: agent.token });
    assert.deepEqual(
      counts.body.data.map((c: any) => c.count),
      [1, 1, 1, 1],
    );
    assert.deepEqual(
      counts.body.data.map((c: any) => c.id),
      [shared.body.id, byKey.body.id, own.body.id, mine.body.id],
    );
    for (const id of [shared.body.id, byKey.body.id, own.body.id])
      assert.equal((await s.request('DELETE', `/v1/views/${id}`, { token: admin.token })).status, 204);
    assert.equal((await s.request('DELETE', `/v1/views/${mine.body.id}`, { token: agent.token })).status, 204);
    assert.equal((await s.request('GET', `/v1/views/${mine.body.id}`, { token: agent.token })).status, 404);
  });

  test('moving a view renumbers its group', async () => {
    const ids: string[] = [];
    for (const name of ['A', 'B', 'C', 'D']) ids.push((await s.request('POST', '/v1/views', { token: agent.token, body: { name } })).body.id);
    const order = async () => (await s.request('GET', '/v1/views', { token: agent.token })).body.data.map((v: any) => `${v.name}${v.position}`);
    assert.deepEqual(await order(), ['A0', 'B1', 'C2', 'D3']);
    assert.equal((await s.request('PATCH', `/v1/views/${ids[3]}`, { token: agent.token, body: { position: 0 } })).status, 200);
    assert.deepEqual(await order(), ['D0', 'A1', 'B2', 'C3']);
    await s.request('PATCH', `/v1/views/${ids[3]}`, { token: agent.token, body: { position: 99 } });
    assert.deepEqual(await order(), ['A0', 'B1', 'C2', 'D3']);
    await s.request('PATCH', `/v1/views/${ids[0]}`, { token: agent.token, body: { position: 2 } });
    assert.deepEqual(await order(), ['B0', 'C1', 'A2', 'D3']);
    // Another member's group is not touched.
    assert.deepEqual((await s.request('GET', '/v1/views', { token: agent2.token })).body.data, []);
    for (const id of ids) await s.request('DELETE', `/v1/views/${id}`, { token: agent.token });
  });

  test('bad input is a 400 naming the problem, and nothing is stored', async () => {
    const bad: object[] = [
      { name: '' },
      { name: 'x'.repeat(81) },
      { name: 'ok', filters: { status: ['archived'] } },
      { name: 'ok', filters: { sla: 'late' } },
      { name: 'ok', filters: { created: { after: 'yesterday' } } },
      { name: 'ok', filters: { contact_attribute: { key: 'a"b', op: 'eq', value: 'x' } } },
      { name: 'ok', filters: { contact_attribute: { key: 'plan', op: 'eq' } } },
      { name: 'ok', filters: { custom_field: { key: 'x' } } },
      { name: 'ok', filters: { label: { any: Array.from({ length: 51 }, (_, i) => `l${i}`) } } },
      { name: 'ok', sort: 'random' },
      { name: 'ok', position: -1 },
    ];
    for (const body of bad) {
      const r = await s.request('POST', '/v1/views', { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    for (const query of [
      'status=archived',
      'sla=late',
      'created_after=soon',
      'contact_attribute=a%22b',
      'contact_attribute=plan&contact_attribute_op=contains',
      'priority=extreme',
    ]) {
      const r = await s.request('GET', `/v1/conversations?${query}`, { token: seed.ownerToken });
      assert.equal(r.status, 400, query);
      assert.equal(r.body.error.code, 'invalid_request');
    }
    assert.equal((await s.request('GET', '/v1/conversations?view=view_nothing', { token: seed.ownerToken })).status, 404);
    assert.equal((await s.request('PATCH', '/v1/views/view_nothing', { token: seed.ownerToken, body: { name: 'x' } })).status, 404);
    assert.deepEqual((await s.request('GET', '/v1/views', { token: seed.ownerToken })).body.data, []);
  });

  test('the list’s current parameters keep working', async () => {
    assert.deepEqual(await list('status=open&assignee_id=none&label=vip'), ['both']);
    assert.deepEqual(await list(`assignee_id=${agent.personId}`), ['mine']);
    assert.deepEqual(await list('status=open&snoozed=true'), ['snoozed']);
    assert.deepEqual(await list(`team_id=none&status=closed`), ['closed']);
    assert.deepEqual(await list(`inbox_id=${inboxB}&imported=false&spam=false`), ['inB']);
    const sorted = await s.request('GET', '/v1/conversations?status=open&sort=sla_due&limit=2', { token: seed.ownerToken });
    assert.deepEqual(names(sorted.body.data.map((x: any) => x.id)), ['breached', 'running']);
  });
});
