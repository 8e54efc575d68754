import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createChatChannel } from '../../src/channels/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('/v1/analytics/properties', () => {
  let s: TestServer;
  let seed: Seed;
  let other: Seed;
  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
    other = await seedWorkspace(s.app);
  });
  after(() => s.stop());
  const key = async (scopes: string[]) => (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: `k-${scopes.join('+')}`, scopes })).secret;

  test('owners and admins (and workspace:manage keys) manage properties; agents and analytics:read keys only read', async () => {
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const created = await s.request('POST', '/v1/analytics/properties', { token: admin.token, body: { domain: 'Docs.Example.COM', subdomains: true } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.domain, 'docs.example.com');
    assert.equal(created.body.name, 'docs.example.com');
    assert.equal(created.body.subdomains, true);
    const id = created.body.id as string;

    const refused = await s.request('POST', '/v1/analytics/properties', { token: agent.token, body: { domain: 'agent.example.com' } });
    assert.equal(refused.status, 403);
    const reader = await key(['analytics:read']);
    assert.equal((await s.request('POST', '/v1/analytics/properties', { token: reader, body: { domain: 'k.example.com' } })).status, 403);
    const manager = await key(['workspace:manage']);
    assert.equal((await s.request('POST', '/v1/analytics/properties', { token: manager, body: { domain: 'k.example.com' } })).status, 201);

    const list = await s.request('GET', '/v1/analytics/properties', { token: reader });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.map((p: { domain: string }) => p.domain),
      ['docs.example.com', 'k.example.com'],
    );
    assert.equal(list.body.next_cursor, null);
    assert.equal((await s.request('GET', `/v1/analytics/properties/${id}`, { token: agent.token })).status, 200);
    const noScope = await key(['conversations:read']);
    assert.equal((await s.request('GET', '/v1/analytics/properties', { token: noScope })).status, 403);

    const patched = await s.request('PATCH', `/v1/analytics/properties/${id}`, { token: seed.ownerToken, body: { name: 'Docs', subdomains: false } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'Docs');
    assert.equal(patched.body.subdomains, false);
    assert.equal((await s.request('PATCH', `/v1/analytics/properties/${id}`, { token: agent.token, body: { name: 'X' } })).status, 403);
  });

  test('bad input gets a 4xx and changes nothing; other workspaces’ properties are not found', async () => {
    const before = await s.request('GET', '/v1/analytics/properties', { token: seed.ownerToken });
    for (const domain of ['http://x.example.com', 'x.example.com/a', '10.0.0.1', 'localhost', '']) {
      const r = await s.request('POST', '/v1/analytics/properties', { token: seed.ownerToken, body: { domain } });
      assert.equal(r.status, 400, domain);
      assert.equal(r.body.error.code, 'invalid_request');
    }
    const taken = await s.request('POST', '/v1/analytics/properties', { token: other.ownerToken, body: { domain: 'docs.example.com' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'domain_taken');
    const foreign = (await s.request('POST', '/v1/analytics/properties', { token: other.ownerToken, body: { domain: 'other.example.com' } })).body.id;
    assert.equal((await s.request('GET', `/v1/analytics/properties/${foreign}`, { token: seed.ownerToken })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/analytics/properties/${foreign}`, { token: seed.ownerToken })).status, 404);
    const email = await s.request('POST', '/v1/analytics/properties', {
      token: seed.ownerToken,
      body: { domain: 'c.example.com', chat_channel_id: 'ch_nope' },
    });
    assert.equal(email.status, 400);
    const after = await s.request('GET', '/v1/analytics/properties', { token: seed.ownerToken });
    assert.deepEqual(after.body, before.body);
  });

  test('a chat channel of the workspace can be linked; usage shows the month against the limit', async () => {
    const ch = await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Chat', origins: ['https://docs.example.com'] });
    const r = await s.request('POST', '/v1/analytics/properties', { token: seed.ownerToken, body: { domain: 'chat.example.com', chat_channel_id: ch.id } });
    assert.equal(r.status, 201);
    assert.equal(r.body.chat_channel_id, ch.id);
    const usage = await s.request('GET', '/v1/analytics/usage', { token: seed.ownerToken });
    assert.equal(usage.status, 200);
    assert.deepEqual(usage.body, { month: s.app.clock.now().toISOString().slice(0, 7), events: 0, limit: 0, percent: 0, state: 'ok' });
    const del = await s.request('DELETE', `/v1/analytics/properties/${r.body.id}`, { token: seed.ownerToken });
    assert.equal(del.status, 204);
    const again = await s.request('POST', '/v1/analytics/properties', { token: seed.ownerToken, body: { domain: 'chat.example.com' } });
    assert.equal(again.status, 201, 'a deleted property frees its domain');
  });
});

describe('/a.js', () => {
  test('the tracker is at most 600 bytes gzipped, cacheable, and touches no cookie or storage', async () => {
    const { gzipSync } = await import('node:zlib');
    const s = await startTestServer();
    try {
      const r = await fetch(`${s.url}/a.js`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/javascript/);
      assert.match(r.headers.get('cache-control') ?? '', /max-age=3600/);
      const text = await r.text();
      const size = gzipSync(Buffer.from(text), { level: 9 }).length;
      assert.ok(size <= 600, `${size} bytes gzipped`);
      for (const word of ['cookie', 'localStorage', 'sessionStorage', 'indexedDB']) assert.ok(!text.includes(word), word);
      assert.ok(text.includes('sendBeacon') && text.includes('webdriver') && text.includes('pushState'));
    } finally {
      await s.stop();
    }
  });
});
