// GET /v1/contacts for the contacts page: the query finds names, addresses, external ids and
// attributes; has_open and the creation range filter; a key limited to one inbox counts only that
// inbox's open conversations; bad parameters are a 400 that names them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createInbox } from '../../src/inboxes/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('contacts list filters', () => {
  let s: TestServer;
  let seed: Seed;
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const ids: Record<string, string> = {};
  let inboxB: string;
  let keyB: string;

  const list = async (query: string, token = seed.apiKey) => {
    const r = await s.request('GET', `/v1/contacts?${query}`, { token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body.data as { id: string }[]).map((c) => c.id).sort();
  };
  const idsOf = (...names: string[]) => names.map((n) => ids[n]).sort();

  before(async () => {
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' })).id;
    const address = (await seedEmailChannel(s.app, seed)).address!;
    const addressB = (await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inboxB })).address!;
    const create = async (name: string, body: Record<string, unknown>) => {
      const r = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { name, ...body } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids[name] = r.body.id;
    };
    await create('Ada Lovelace', { emails: ['ada@engines.example'], attributes: { plan: 'Enterprise', seats: 40 } });
    clock.advance(86_400_000);
    await create('Bob Stone', { external_ids: [{ inbox_id: seed.inboxId, external_id: 'CRM-7781' }] });
    clock.advance(86_400_000);
    await create('Cem Yılmaz', { emails: ['cem@example.net'] });
    // Ada writes to the first inbox (open), Cem to the second (closed afterwards); Bob never wrote.
    await deliverMail(s, address, { From: 'ada@engines.example' });
    const cem = await deliverMail(s, addressB, { From: 'cem@example.net' });
    const closed = await s.request('PATCH', `/v1/conversations/${cem.conversation_id}`, { token: seed.apiKey, body: { status: 'closed' } });
    assert.equal(closed.status, 200);
    await deliverMail(s, addressB, { From: 'ada@engines.example', Subject: 'Invoice' });
    const key = await s.request('POST', '/v1/api-keys', {
      token: seed.ownerToken,
      body: { name: 'billing only', scopes: ['contacts:read'], inbox_ids: [inboxB] },
    });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    keyB = key.body.secret;
  });
  after(() => s.stop());

  test('the query matches names, addresses, external ids and attribute values, in any case', async () => {
    assert.deepEqual(await list('q=lovelace'), idsOf('Ada Lovelace'));
    assert.deepEqual(await list('q=EXAMPLE.NET'), idsOf('Cem Yılmaz'));
    assert.deepEqual(await list('q=crm-77'), idsOf('Bob Stone'));
    assert.deepEqual(await list('q=enterprise'), idsOf('Ada Lovelace'));
    // LIKE wildcards are dropped, not taken as patterns: "a_a" would otherwise match "ada".
    assert.deepEqual(await list('q=a_a'), []);
    assert.deepEqual(await list('q=lovel%25ace'), idsOf('Ada Lovelace'));
  });

  test('has_open: true lists contacts with a conversation not closed, false the others', async () => {
    assert.deepEqual(await list('has_open=true'), idsOf('Ada Lovelace'));
    assert.deepEqual(await list('has_open=false'), idsOf('Bob Stone', 'Cem Yılmaz'));
    // Limited to the second inbox: Ada's open conversation there counts, Cem's is closed.
    assert.deepEqual(await list('has_open=true', keyB), idsOf('Ada Lovelace'));
    assert.deepEqual(await list('has_open=false', keyB), idsOf('Cem Yılmaz'));
  });

  test('created_after and created_before bound the creation time', async () => {
    assert.deepEqual(await list('created_after=2026-03-02T00:00:00Z'), idsOf('Bob Stone', 'Cem Yılmaz'));
    assert.deepEqual(await list('created_before=2026-03-02T00:00:00Z'), idsOf('Ada Lovelace'));
    assert.deepEqual(await list('created_after=2026-03-02T00:00:00Z&created_before=2026-03-03T00:00:00Z'), idsOf('Bob Stone'));
  });

  test('bad parameters answer 400 and name the parameter', async () => {
    for (const [query, word] of [
      ['created_after=yesterday', 'created_after'],
      ['created_before=2026-13-45', 'created_before'],
      ['has_open=maybe', 'has_open'],
    ]) {
      const r = await s.request('GET', `/v1/contacts?${query}`, { token: seed.apiKey });
      assert.equal(r.status, 400, query);
      assert.match(JSON.stringify(r.body.error), new RegExp(word), query);
    }
  });
});
