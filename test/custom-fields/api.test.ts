// Custom fields (issue 37) against the real server: definitions (who may manage them, bad input
// named by field), values per type on conversations and contacts (table-driven valid and invalid
// values, null clears), required-before-closing, the list filter, values in events (what webhooks
// send), and that deleting a field, an option, a contact or a workspace takes the values with it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteWorkspaceCustomFields } from '../../src/custom-fields/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, eventsAfter, INGRESS_SECRET, lastEventSeq, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Person = Awaited<ReturnType<typeof addPerson>>;

describe('custom fields API', () => {
  let s: TestServer;
  let seed: Seed;
  let admin: Person;
  let agent: Person;
  let address: string;
  const ids: Record<string, string> = {};

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    admin = await addPerson(s.app, seed.workspaceId, 'admin');
    agent = await addPerson(s.app, seed.workspaceId, 'agent');
    address = (await seedEmailChannel(s.app, seed)).address!;
  });
  after(() => s.stop());

  const newConversation = async (from = `c-${Math.random().toString(36).slice(2)}@example.net`) =>
    (await deliverMail(s, address, { Subject: `Q ${Math.random()}`, From: from })).conversation_id;
  const patch = (id: string, body: unknown, token = agent.token) => s.request('PATCH', `/v1/conversations/${id}`, { token, body });
  const valueRows = (ownerId: string) => s.app.db.selectFrom('custom_field_values').selectAll().where('owner_id', '=', ownerId).execute();

  const FIELDS = [
    { object: 'conversation', key: 'order_note', label: 'Order note', type: 'text' },
    { object: 'conversation', key: 'amount', label: 'Amount', type: 'number' },
    { object: 'conversation', key: 'due', label: 'Due', type: 'date' },
    { object: 'conversation', key: 'plan', label: 'Plan', type: 'single_select', options: ['Free', 'Pro', 'Team'] },
    { object: 'conversation', key: 'topics', label: 'Topics', type: 'multi_select', options: ['billing', 'bug', 'feature'] },
    { object: 'conversation', key: 'vip', label: 'VIP', type: 'checkbox' },
    { object: 'conversation', key: 'ticket', label: 'Ticket link', type: 'link' },
    { object: 'contact', key: 'tier', label: 'Tier', type: 'single_select', options: ['gold', 'silver'] },
    { object: 'contact', key: 'birthday', label: 'Birthday', type: 'date' },
  ];

  test('owners and admins define fields; everyone reads them; bad definitions are named and change nothing', async () => {
    for (const [n, f] of FIELDS.entries()) {
      const r = await s.request('POST', '/v1/custom-fields', { token: n % 2 ? admin.token : seed.ownerToken, body: f });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.match(r.body.id, /^cf_/);
      assert.equal(r.body.key, f.key);
      assert.deepEqual(r.body.options, f.options ?? null);
      assert.equal(r.body.required_before_closing, false);
      ids[f.key] = r.body.id;
    }
    for (const token of [agent.token, seed.apiKey]) {
      const list = await s.request('GET', '/v1/custom-fields', { token });
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.data.map((f: any) => f.key),
        FIELDS.map((f) => f.key),
      );
      const contactOnly = await s.request('GET', '/v1/custom-fields?object=contact', { token });
      assert.deepEqual(
        contactOnly.body.data.map((f: any) => f.key),
        ['tier', 'birthday'],
      );
    }
    const refused = await s.request('POST', '/v1/custom-fields', { token: agent.token, body: { object: 'conversation', key: 'x', label: 'X', type: 'text' } });
    assert.equal(refused.status, 403);
    assert.equal((await s.request('DELETE', `/v1/custom-fields/${ids.amount}`, { token: agent.token })).status, 403);

    const BAD: [unknown, string][] = [
      [{ object: 'conversation', key: 'Bad Key', label: 'X', type: 'text' }, 'key'],
      [{ object: 'conversation', key: 'x1', label: '  ', type: 'text' }, 'label'],
      [{ object: 'conversation', key: 'x2', label: 'X', type: 'single_select' }, 'options'],
      [{ object: 'conversation', key: 'x3', label: 'X', type: 'single_select', options: ['a', 'a'] }, 'options.1'],
      [{ object: 'conversation', key: 'x4', label: 'X', type: 'text', options: ['a'] }, 'options'],
      [{ object: 'contact', key: 'x5', label: 'X', type: 'text', required_before_closing: true }, 'required_before_closing'],
    ];
    for (const [body, path] of BAD) {
      const r = await s.request('POST', '/v1/custom-fields', { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(
        r.body.error.issues.some((i: any) => i.path === path),
        `${JSON.stringify(r.body.error)} names ${path}`,
      );
    }
    const wrongType = await s.request('POST', '/v1/custom-fields', {
      token: seed.ownerToken,
      body: { object: 'conversation', key: 'x6', label: 'X', type: 'color' },
    });
    assert.equal(wrongType.status, 400);
    const taken = await s.request('POST', '/v1/custom-fields', { token: seed.ownerToken, body: FIELDS[0] });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'custom_field_key_taken');
    // The same key on the other object is another field.
    const other = await s.request('POST', '/v1/custom-fields', { token: seed.ownerToken, body: { ...FIELDS[0], object: 'contact' } });
    assert.equal(other.status, 201);
    assert.equal((await s.request('DELETE', `/v1/custom-fields/${other.body.id}`, { token: seed.ownerToken })).status, 200);
    // key and type never change.
    const changeKey = await s.request('PATCH', `/v1/custom-fields/${ids.amount}`, { token: seed.ownerToken, body: { key: 'sum' } });
    assert.equal(changeKey.status, 400);
    const count = await s.app.db
      .selectFrom('custom_fields')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', seed.workspaceId)
      .executeTakeFirst();
    assert.equal(Number(count!.n), FIELDS.length);
  });

  test('conversation values are checked by type: valid ones are stored and shown, invalid ones are 400s naming the field', async () => {
    const id = await newConversation();
    const CASES: { key: string; valid: unknown[]; invalid: unknown[] }[] = [
      { key: 'order_note', valid: ['Two mugs, one chipped', 'ünïcode ✓'], invalid: [12, true, ['a'], 'x'.repeat(2001), 'bell\u0007'] },
      { key: 'amount', valid: [0, -3.5, 1234567], invalid: ['12', true, 1e16, [1]] },
      { key: 'due', valid: ['2026-12-31', '2024-02-29'], invalid: ['2025-02-29', '31.12.2026', '2026-13-01', '2026-12-31T00:00:00Z', 20261231] },
      { key: 'plan', valid: ['Pro', 'Free'], invalid: ['pro', 'Enterprise', ['Pro'], 1] },
      { key: 'topics', valid: [['bug', 'billing'], ['feature']], invalid: ['bug', ['bug', 'bug'], ['nope'], [1]] },
      { key: 'vip', valid: [true, false], invalid: ['true', 1, 'yes'] },
      {
        key: 'ticket',
        valid: ['https://tracker.example.com/T-1?x=1', 'http://example.org'],
        invalid: ['javascript:alert(1)', 'ftp://example.org/file', 'example.org', 'https://exa mple.org', 'mailto:a@example.org', 5],
      },
    ];
    for (const c of CASES) {
      for (const value of c.valid) {
        const r = await patch(id, { custom_fields: { [c.key]: value } });
        assert.equal(r.status, 200, `${c.key}=${JSON.stringify(value)}: ${JSON.stringify(r.body)}`);
        assert.deepEqual(r.body.custom_fields[c.key], value);
        const got = await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey });
        assert.deepEqual(got.body.custom_fields[c.key], value);
      }
      const kept = (await s.request('GET', `/v1/conversations/${id}`, { token: agent.token })).body.custom_fields;
      for (const value of c.invalid) {
        const r = await patch(id, { custom_fields: { [c.key]: value }, priority: 'high' });
        assert.equal(r.status, 400, `${c.key}=${JSON.stringify(value)} must be refused`);
        assert.equal(r.body.error.code, 'invalid_request');
        assert.match(r.body.error.message, new RegExp(`custom_fields\\.${c.key}`));
        assert.deepEqual(
          r.body.error.issues.map((i: any) => i.path),
          [`custom_fields.${c.key}`],
        );
      }
      const now = (await s.request('GET', `/v1/conversations/${id}`, { token: agent.token })).body;
      assert.deepEqual(now.custom_fields, kept, 'a refused change writes nothing');
      assert.equal(now.priority, null);
    }
    // Every field is present; null clears one, an unknown key is refused with the others named too.
    const unknown = await patch(id, { custom_fields: { nope: 1, amount: 'x' } });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body.error.issues.map((i: any) => i.path).sort(), ['custom_fields.amount', 'custom_fields.nope']);
    const contactKey = await patch(id, { custom_fields: { tier: 'gold' } });
    assert.equal(contactKey.status, 400, 'a contact field is not a conversation field');
    const cleared = await patch(id, { custom_fields: { order_note: null, topics: [], vip: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.custom_fields.order_note, null);
    assert.equal(cleared.body.custom_fields.topics, null);
    assert.equal(cleared.body.custom_fields.vip, null);
    assert.equal(cleared.body.custom_fields.amount, 1234567);
    assert.deepEqual(
      Object.keys(cleared.body.custom_fields),
      FIELDS.filter((f) => f.object === 'conversation').map((f) => f.key),
    );
    // The timeline says what changed.
    const lines = await s.app.db.selectFrom('messages').select('body').where('conversation_id', '=', id).where('kind', '=', 'event').execute();
    assert.ok(lines.some((l) => l.body.includes('custom_fields.order_note')));
  });

  test('contact values: POST, PATCH, GET and the list show them; events carry them', async () => {
    const seq = await lastEventSeq(s);
    const made = await s.request('POST', '/v1/contacts', { token: agent.token, body: { name: 'Ada', custom_fields: { tier: 'gold' } } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.deepEqual(made.body.custom_fields, { tier: 'gold', birthday: null });
    const bad = await s.request('PATCH', `/v1/contacts/${made.body.id}`, {
      token: agent.token,
      body: { name: 'Ada L', custom_fields: { birthday: '1815-02-30' } },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.issues[0].path, 'custom_fields.birthday');
    assert.equal((await s.request('GET', `/v1/contacts/${made.body.id}`, { token: agent.token })).body.name, 'Ada');
    const ok = await s.request('PATCH', `/v1/contacts/${made.body.id}`, { token: agent.token, body: { custom_fields: { birthday: '1815-12-10' } } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.custom_fields, { tier: 'gold', birthday: '1815-12-10' });
    const list = await s.request('GET', '/v1/contacts?q=Ada', { token: agent.token });
    assert.deepEqual(list.body.data[0].custom_fields, { tier: 'gold', birthday: '1815-12-10' });
    const events = (await eventsAfter(s, seq)).filter((e) => e.type === 'contact.updated');
    assert.equal(events.length, 1);
    assert.deepEqual(events[0].data.contact.custom_fields, { tier: 'gold', birthday: '1815-12-10' });
  });

  test('webhook data: conversation events carry the conversation’s and the contact’s values', async () => {
    const from = `hook-${Math.random().toString(36).slice(2)}@example.net`;
    const first = await newConversation(from);
    const contactId = (await s.request('GET', `/v1/conversations/${first}`, { token: agent.token })).body.contact_id;
    await s.request('PATCH', `/v1/contacts/${contactId}`, { token: agent.token, body: { custom_fields: { tier: 'silver' } } });
    const seq = await lastEventSeq(s);
    assert.equal((await patch(first, { custom_fields: { plan: 'Team', topics: ['bug'] } })).status, 200);
    const second = await deliverMail(s, address, { Subject: 'More', From: from });
    const events = await eventsAfter(s, seq);
    const updated = events.find((e) => e.type === 'conversation.updated')!;
    assert.equal(updated.data.conversation.custom_fields.plan, 'Team');
    assert.deepEqual(updated.data.conversation.custom_fields.topics, ['bug']);
    assert.equal(updated.data.contact.custom_fields.tier, 'silver');
    const created = events.find((e) => e.type === 'message.created' && e.data.conversation.id === second.conversation_id)!;
    assert.ok(created, 'the new mail’s message.created');
    assert.equal(created.data.contact.custom_fields.tier, 'silver');
    assert.equal(created.data.conversation.custom_fields.amount, null);
  });

  test('required before closing: closing is refused with custom_fields_required until the field is filled', async () => {
    const r = await s.request('PATCH', `/v1/custom-fields/${ids.plan}`, { token: admin.token, body: { required_before_closing: true } });
    assert.equal(r.status, 200);
    assert.equal(r.body.required_before_closing, true);
    const id = await newConversation();
    for (const token of [agent.token, seed.apiKey]) {
      const refused = await patch(id, { status: 'closed', priority: 'low' }, token);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'custom_fields_required');
      assert.deepEqual(refused.body.error.fields, ['plan']);
      assert.match(refused.body.error.message, /Plan \(plan\)/);
    }
    const still = (await s.request('GET', `/v1/conversations/${id}`, { token: agent.token })).body;
    assert.equal(still.status, 'open');
    assert.equal(still.priority, null, 'nothing of the refused change is kept');
    const bulk = await s.request('POST', '/v1/conversations/bulk-update', {
      token: agent.token,
      body: { conversation_ids: [id], changes: { status: 'closed' } },
    });
    assert.equal(bulk.status, 409);
    assert.equal(bulk.body.error.code, 'custom_fields_required');
    // Pending is not closing.
    assert.equal((await patch(id, { status: 'pending' })).status, 200);
    // Filling it in the same change closes at once.
    const closed = await patch(id, { status: 'closed', custom_fields: { plan: 'Pro' } });
    assert.equal(closed.status, 200, JSON.stringify(closed.body));
    assert.equal(closed.body.status, 'closed');
    // Clearing it afterwards is allowed; reopening and closing again is refused again.
    assert.equal((await patch(id, { status: 'open', custom_fields: { plan: null } })).status, 200);
    assert.equal((await patch(id, { status: 'closed' })).status, 409);
    await s.request('PATCH', `/v1/custom-fields/${ids.plan}`, { token: admin.token, body: { required_before_closing: false } });
    assert.equal((await patch(id, { status: 'closed' })).status, 200);
  });

  test('the list filters by custom_field.<key>: equality, multi-select contains, checkbox, date, number', async () => {
    const [a, b, c] = [await newConversation(), await newConversation(), await newConversation()];
    assert.equal(
      (await patch(a, { custom_fields: { plan: 'Pro', topics: ['bug', 'billing'], vip: true, due: '2026-05-01', amount: 10, order_note: 'x y' } })).status,
      200,
    );
    assert.equal((await patch(b, { custom_fields: { plan: 'Free', topics: ['billing'], vip: false, amount: 10.5 } })).status, 200);
    assert.equal((await patch(c, { custom_fields: { topics: ['feature'] } })).status, 200);
    const mine = new Set([a, b, c]);
    const list = async (query: string) => {
      const r = await s.request('GET', `/v1/conversations?limit=200&${query}`, { token: agent.token });
      assert.equal(r.status, 200, `${query}: ${JSON.stringify(r.body)}`);
      return r.body.data
        .map((x: any) => x.id)
        .filter((x: string) => mine.has(x))
        .sort();
    };
    const sorted = (...x: string[]) => x.sort();
    assert.deepEqual(await list('custom_field.plan=Pro'), [a]);
    assert.deepEqual(await list('custom_field.topics=billing'), sorted(a, b));
    assert.deepEqual(await list('custom_field.topics=billing&custom_field.topics=bug'), [a]);
    assert.deepEqual(await list('custom_field.topics=feature'), [c]);
    assert.deepEqual(await list('custom_field.vip=true'), [a]);
    assert.deepEqual(await list('custom_field.vip=false'), sorted(b, c));
    assert.deepEqual(await list('custom_field.due=2026-05-01'), [a]);
    assert.deepEqual(await list('custom_field.amount=10'), [a]);
    assert.deepEqual(await list('custom_field.amount=10.5'), [b]);
    assert.deepEqual(await list(`custom_field.order_note=${encodeURIComponent('x y')}`), [a]);
    assert.deepEqual(await list('custom_field.plan=Pro&custom_field.vip=false'), []);
    // Paging keeps the filter.
    const page1 = await s.request('GET', '/v1/conversations?limit=1&custom_field.topics=billing', { token: agent.token });
    assert.equal(page1.body.data.length, 1);
    const page2 = await s.request('GET', `/v1/conversations?limit=1&custom_field.topics=billing&cursor=${page1.body.next_cursor}`, { token: agent.token });
    assert.deepEqual(sorted(page1.body.data[0].id, page2.body.data[0].id), sorted(a, b));
    // List items carry the values.
    const item = (await s.request('GET', '/v1/conversations?custom_field.plan=Pro', { token: agent.token })).body.data.find((x: any) => x.id === a);
    assert.deepEqual(item.custom_fields.topics, ['bug', 'billing']);
    for (const [query, path] of [
      ['custom_field.nope=1', 'custom_field.nope'],
      ['custom_field.amount=ten', 'custom_field.amount'],
      ['custom_field.vip=yes', 'custom_field.vip'],
      ['custom_field.due=May', 'custom_field.due'],
      ['custom_field.plan=Enterprise', 'custom_field.plan'],
      ['custom_field.tier=gold', 'custom_field.tier'],
    ]) {
      const r = await s.request('GET', `/v1/conversations?${query}`, { token: agent.token });
      assert.equal(r.status, 400, query);
      assert.equal(r.body.error.issues[0].path, path);
    }
  });

  test('taking an option away removes the values that chose it; deleting a field removes all its values', async () => {
    const id = await newConversation();
    assert.equal((await patch(id, { custom_fields: { topics: ['bug', 'feature'], amount: 7, plan: 'Team' } })).status, 200);
    const r = await s.request('PATCH', `/v1/custom-fields/${ids.topics}`, { token: admin.token, body: { options: ['billing', 'feature', 'question'] } });
    assert.equal(r.status, 200);
    assert.deepEqual((await s.request('GET', `/v1/conversations/${id}`, { token: agent.token })).body.custom_fields.topics, ['feature']);

    const before = (await s.app.db.selectFrom('custom_field_values').select('owner_id').where('field_id', '=', ids.amount).execute()).length;
    assert.ok(before >= 2);
    const del = await s.request('DELETE', `/v1/custom-fields/${ids.amount}`, { token: admin.token });
    assert.equal(del.status, 200);
    assert.equal(del.body.values_deleted, before);
    assert.equal((await s.app.db.selectFrom('custom_field_values').select('owner_id').where('field_id', '=', ids.amount).execute()).length, 0);
    const got = (await s.request('GET', `/v1/conversations/${id}`, { token: agent.token })).body.custom_fields;
    assert.equal('amount' in got, false);
    assert.equal(got.plan, 'Team');
    assert.equal((await s.request('GET', `/v1/custom-fields/${ids.amount}`, { token: agent.token })).status, 404);
    assert.equal((await patch(id, { custom_fields: { amount: 1 } })).status, 400, 'the key is gone');
  });

  test('a deleted contact takes its own and its conversations’ values; a deleted workspace takes every field', async () => {
    const from = `gone-${Math.random().toString(36).slice(2)}@example.net`;
    const id = await newConversation(from);
    const contactId = (await s.request('GET', `/v1/conversations/${id}`, { token: agent.token })).body.contact_id;
    assert.equal((await patch(id, { custom_fields: { plan: 'Pro' } })).status, 200);
    assert.equal((await s.request('PATCH', `/v1/contacts/${contactId}`, { token: agent.token, body: { custom_fields: { tier: 'gold' } } })).status, 200);
    assert.equal((await valueRows(id)).length, 1);
    assert.equal((await valueRows(contactId)).length, 1);
    assert.equal((await s.request('DELETE', `/v1/contacts/${contactId}`, { token: agent.token })).status, 200);
    assert.equal((await valueRows(id)).length, 0);
    assert.equal((await valueRows(contactId)).length, 0);

    const total = async () =>
      (await s.app.db.selectFrom('custom_fields').select('id').where('workspace_id', '=', seed.workspaceId).execute()).length +
      (await s.app.db.selectFrom('custom_field_values').select('owner_id').where('workspace_id', '=', seed.workspaceId).execute()).length;
    assert.ok((await total()) > 0);
    let deleted = 0;
    for (let n = await deleteWorkspaceCustomFields(s.app, seed.workspaceId, 2); n > 0; n = await deleteWorkspaceCustomFields(s.app, seed.workspaceId, 2))
      deleted += n;
    assert.ok(deleted > 0);
    assert.equal(await total(), 0);
  });
});
