import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { DAY, ManualClock } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('authentication and authorization', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  before(async () => {
    clock = new ManualClock('2026-05-01T00:00:00Z');
    s = await startTestServer({ clock });
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('missing, malformed and unknown credentials get 401 in the error shape', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Basic abc' },
      { authorization: 'Bearer svc_sk_unknown' },
      { authorization: 'Bearer svc_ses_unknown' },
      { authorization: 'Bearer whatever' },
    ]) {
      const r = await s.request('GET', '/v1/workspace', { headers });
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.equal(r.body.error.code, 'unauthorized');
      assert.equal(typeof r.body.error.message, 'string');
    }
  });

  test('a revoked key stops working at once', async () => {
    const { key, secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'short-lived' });
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 200);
    await revokeApiKey(s.app, key.id);
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 401);
  });

  test('an expired key is refused', async () => {
    const { secret } = await createApiKey(s.app, {
      workspaceId: seed.workspaceId,
      name: 'expiring',
      expiresAt: new Date(clock.now().getTime() + DAY).toISOString(),
    });
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 200);
    clock.advance(DAY + 1);
    assert.equal((await s.request('GET', '/v1/workspace', { token: secret })).status, 401);
  });

  test('keys of a deleted workspace are refused', async () => {
    const other = await seedWorkspace(s.app);
    await s.app.db.updateTable('workspaces').set({ deleted_at: clock.now().toISOString() }).where('id', '=', other.workspaceId).execute();
    assert.equal((await s.request('GET', '/v1/workspace', { token: other.apiKey })).status, 401);
    assert.equal((await s.request('GET', '/v1/workspace', { token: other.ownerToken })).status, 403);
  });

  test('a key without the scope gets 403', async () => {
    const { secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'reader', scopes: ['contacts:read'] });
    const r = await s.request('GET', '/v1/webhooks', { token: secret });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
    assert.match(r.body.error.message, /webhooks:manage/);
  });

  test('PATCH /v1/workspace (retention) is owner only: an API key is refused even with workspace:manage, and nothing changes', async () => {
    const { secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'manager', scopes: ['workspace:manage'] });
    const before = (await s.request('GET', '/v1/workspace', { token: seed.ownerToken })).body.retention_days;
    for (const token of [secret, seed.apiKey]) {
      const r = await s.request('PATCH', '/v1/workspace', { token, body: { retention_days: 1 } });
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'forbidden');
      assert.match(r.body.error.message, /owners only, not to API keys/);
    }
    assert.equal((await s.request('GET', '/v1/workspace', { token: seed.ownerToken })).body.retention_days, before);
  });

  test('an inbox limit hides the other inboxes', async () => {
    const second = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const { secret } = await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'limited', inboxIds: [second.id] });
    const list = await s.request('GET', '/v1/inboxes', { token: secret });
    assert.deepEqual(
      list.body.data.map((i: { id: string }) => i.id),
      [second.id],
    );
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}`, { token: secret })).status, 404);
    assert.equal((await s.request('GET', `/v1/inboxes/${second.id}`, { token: secret })).status, 200);
    assert.equal((await s.request('GET', `/v1/channels?inbox_id=${seed.inboxId}`, { token: secret })).status, 404);
    const all = await s.request('GET', '/v1/inboxes', { token: seed.apiKey });
    assert.equal(all.body.data.length, 2);
  });

  test('PATCH /v1/workspace: owners yes, admins and agents no', async () => {
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('PATCH', '/v1/workspace', { token: admin.token, body: { retention_days: 30 } })).status, 403);
    assert.equal((await s.request('PATCH', '/v1/workspace', { token: agent.token, body: { retention_days: 30 } })).status, 403);
    const r = await s.request('PATCH', '/v1/workspace', { token: seed.ownerToken, body: { retention_days: 30 } });
    assert.equal(r.status, 200);
    assert.equal(r.body.retention_days, 30);
    const cleared = await s.request('PATCH', '/v1/workspace', { token: seed.ownerToken, body: { retention_days: null } });
    assert.equal(cleared.body.retention_days, null);
  });

  test('what each role may do: owners everything, admins all but the workspace, agents conversations and contacts only', async () => {
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const calls: [string, string, unknown?][] = [
      ['GET', '/v1/conversations'],
      ['GET', '/v1/contacts'],
      ['GET', '/v1/broadcasts'],
      ['GET', '/v1/webhooks'],
      ['GET', '/v1/migrations'],
      ['PATCH', '/v1/workspace', { retention_days: null }],
    ];
    const allowed: Record<string, string[]> = {
      owner: calls.map(([m, p]) => `${m} ${p}`),
      admin: calls.map(([m, p]) => `${m} ${p}`).filter((c) => c !== 'PATCH /v1/workspace'),
      agent: ['GET /v1/conversations', 'GET /v1/contacts'],
    };
    const tokens: Record<string, string> = { owner: seed.ownerToken, admin: admin.token, agent: agent.token };
    for (const [role, token] of Object.entries(tokens)) {
      for (const [method, path, body] of calls) {
        const r = await s.request(method, path, { token, body });
        const expected = allowed[role].includes(`${method} ${path}`) ? 200 : 403;
        assert.equal(r.status, expected, `${role}: ${method} ${path} answered ${r.status} ${JSON.stringify(r.body)}`);
      }
    }
  });

  test('PATCH /v1/workspace refuses wrong types and values and changes nothing', async () => {
    await s.request('PATCH', '/v1/workspace', { token: seed.ownerToken, body: { retention_days: 10 } });
    for (const body of [
      { retention_days: 0 },
      { retention_days: -5 },
      { retention_days: '30' },
      { retention_days: 1.5 },
      { retention_days: 30, name: 'x' },
      [1],
      'text',
    ]) {
      const r = await s.request('PATCH', '/v1/workspace', { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(Array.isArray(r.body.error.issues));
    }
    const malformed = await s.request('PATCH', '/v1/workspace', {
      token: seed.ownerToken,
      raw: '{"retention_days": 3',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'invalid_request');
    const huge = await s.request('PATCH', '/v1/workspace', {
      token: seed.ownerToken,
      raw: JSON.stringify({ retention_days: 5, pad: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error.code, 'too_large');
    const ws = await s.request('GET', '/v1/workspace', { token: seed.ownerToken });
    assert.equal(ws.body.retention_days, 10);
  });

  test('a person in two workspaces names one with Svc-Workspace', async () => {
    const other = await seedWorkspace(s.app);
    const both = await addPerson(s.app, seed.workspaceId, 'admin', 'two-hats@example.com');
    await addPerson(s.app, other.workspaceId, 'agent', 'two-hats@example.com');
    const r = await s.request('GET', '/v1/workspace', { token: both.token });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /Svc-Workspace/);
    const a = await s.request('GET', '/v1/workspace', { token: both.token, headers: { 'svc-workspace': other.workspaceId } });
    assert.equal(a.body.id, other.workspaceId);
    const stranger = await seedWorkspace(s.app);
    assert.equal((await s.request('GET', '/v1/workspace', { token: both.token, headers: { 'svc-workspace': stranger.workspaceId } })).status, 403);
  });

  test('API keys through the API: the secret once, never listed; last use recorded; agents may not manage keys', async () => {
    const created = await s.request('POST', '/v1/api-keys', {
      token: seed.ownerToken,
      body: { name: 'ci', scopes: ['conversations:read'], inbox_ids: [seed.inboxId] },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.secret, /^svc_sk_/);
    assert.ok(created.body.secret.startsWith(created.body.prefix));
    assert.deepEqual(created.body.scopes, ['conversations:read']);
    assert.deepEqual(created.body.inbox_ids, [seed.inboxId]);
    assert.equal(created.body.last_used_at, null);
    await s.request('GET', '/v1/inboxes', { token: created.body.secret });
    const list = await s.request('GET', '/v1/api-keys', { token: seed.ownerToken });
    assert.equal(list.status, 200);
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    assert.equal(listed.secret, undefined);
    assert.ok(!JSON.stringify(list.body).includes(created.body.secret));
    assert.equal(listed.last_used_at, clock.now().toISOString());
    const bad = await s.request('POST', '/v1/api-keys', { token: seed.ownerToken, body: { name: 'x', scopes: ['everything'] } });
    assert.equal(bad.status, 400);
    const foreignInbox = await s.request('POST', '/v1/api-keys', { token: seed.ownerToken, body: { name: 'x', inbox_ids: ['inb_nope'] } });
    assert.equal(foreignInbox.status, 400);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('GET', '/v1/api-keys', { token: agent.token })).status, 403);
    assert.equal((await s.request('POST', '/v1/api-keys', { token: seed.apiKey, body: { name: 'escalate' } })).status, 403);
    const revoked = await s.request('DELETE', `/v1/api-keys/${created.body.id}`, { token: seed.ownerToken });
    assert.ok(revoked.body.revoked_at);
    assert.equal((await s.request('GET', '/v1/inboxes', { token: created.body.secret })).status, 401);
  });

  test('channels through the API: SMTP password only as set; origins checked', async () => {
    const email = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: {
        kind: 'email',
        inbox_id: seed.inboxId,
        name: 'Support mail',
        address: 'Help@Example.com',
        smtp_host: 'smtp.example.com',
        smtp_username: 'help',
        smtp_password: 'hunter2-secret',
      },
    });
    assert.equal(email.status, 201);
    assert.equal(email.body.address, 'help@example.com');
    assert.deepEqual(email.body.smtp, { host: 'smtp.example.com', port: 587, tls: 'starttls', username: 'help', password_set: true });
    assert.ok(!JSON.stringify(email.body).includes('hunter2-secret'));
    const stored = await s.app.db.selectFrom('channels').select('smtp_password_sealed').where('id', '=', email.body.id).executeTakeFirstOrThrow();
    assert.ok(stored.smtp_password_sealed && !stored.smtp_password_sealed.includes('hunter2'));
    assert.equal(s.app.sealer.open(stored.smtp_password_sealed), 'hunter2-secret');
    const dup = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: { kind: 'email', inbox_id: seed.inboxId, name: 'Again', address: 'help@example.com' },
    });
    assert.equal(dup.status, 409);
    const chat = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: { kind: 'chat', inbox_id: seed.inboxId, name: 'Widget', origins: ['https://www.example.com', 'http://localhost:3000'] },
    });
    assert.equal(chat.status, 201);
    assert.match(chat.body.public_key, /^svc_pk_/);
    assert.equal(chat.body.ask_email_offline, true);
    const badOrigin = await s.request('POST', '/v1/channels', {
      token: seed.apiKey,
      body: { kind: 'chat', inbox_id: seed.inboxId, name: 'W', origins: ['https://example.com/path'] },
    });
    assert.equal(badOrigin.status, 400);
    assert.ok(!s.rawLogs.join('').includes('hunter2-secret'));
  });
});
