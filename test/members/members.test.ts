import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { memberAccess } from '../../src/auth/access.js';
import { createInbox } from '../../src/inboxes/service.js';
import { updateMember } from '../../src/members/service.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { eventsAfter, lastEventSeq } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Frame = { type: string; [k: string]: unknown };

/** Opens /v1/realtime with a Bearer session and collects frames until it closes. */
function openSocket(s: TestServer, token: string) {
  const ws = new WebSocket(s.url.replace('http', 'ws') + '/v1/realtime', { headers: { authorization: `Bearer ${token}` } });
  const frames: Frame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(String(d))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.on('message', () => frames.some((f) => f.type === 'live') && resolve());
  });
  return { ws, frames, closed, opened };
}

describe('members and roles', () => {
  let s: TestServer;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock('2026-09-01T08:00:00Z');
    s = await startTestServer({ clock });
  });
  after(() => s.stop());

  async function memberId(seed: Seed, personId: string): Promise<string> {
    const r = await s.request('GET', '/v1/members', { token: seed.ownerToken });
    return r.body.data.find((m: { person_id: string }) => m.person_id === personId).id;
  }

  async function feedback(seed: Seed, inboxId = seed.inboxId) {
    const r = await s.request('POST', '/v1/feedback', {
      token: seed.apiKey,
      body: { inbox_id: inboxId, contact: { email: `c${Math.random()}@example.com` }, body: 'hello' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.conversation.id as string;
  }

  test('GET /v1/members lists id, person, e-mail, name, role, inbox limit, joined and last seen; every role may read it', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    for (const token of [seed.ownerToken, agent.token, seed.apiKey]) {
      const r = await s.request('GET', '/v1/members', { token });
      assert.equal(r.status, 200);
      assert.equal(r.body.data.length, 2);
    }
    const r = await s.request('GET', '/v1/members', { token: seed.ownerToken });
    const owner = r.body.data[0];
    assert.deepEqual(Object.keys(owner), ['id', 'person_id', 'email', 'name', 'role', 'inbox_ids', 'joined_at', 'last_seen_at']);
    assert.match(owner.id, /^mem_/);
    assert.equal(owner.person_id, seed.ownerId);
    assert.equal(owner.role, 'owner');
    assert.equal(owner.last_seen_at, clock.now().toISOString(), 'the request itself counts as being seen');
    const agentRow = r.body.data[1];
    assert.equal(agentRow.email, agent.email);
    assert.equal(agentRow.role, 'agent');
    assert.equal(agentRow.inbox_ids, null);
    // seen again after 5 minutes, not on every request
    const seenBefore = agentRow.last_seen_at;
    clock.advance(MINUTE);
    await s.request('GET', '/v1/workspace', { token: agent.token });
    assert.equal((await s.request('GET', '/v1/members', { token: seed.ownerToken })).body.data[1].last_seen_at, seenBefore);
    clock.advance(5 * MINUTE);
    await s.request('GET', '/v1/workspace', { token: agent.token });
    assert.equal((await s.request('GET', '/v1/members', { token: seed.ownerToken })).body.data[1].last_seen_at, clock.now().toISOString());
    // a page at a time
    const page = await s.request('GET', '/v1/members?limit=1', { token: seed.ownerToken });
    assert.equal(page.body.data.length, 1);
    const rest = await s.request('GET', `/v1/members?limit=1&cursor=${page.body.next_cursor}`, { token: seed.ownerToken });
    assert.equal(rest.body.data[0].person_id, agent.personId);
    assert.equal(rest.body.next_cursor, null);
  });

  test('owners and admins change roles; only an owner makes or unmakes an owner; agents and keys may not', async () => {
    const seed = await seedWorkspace(s.app);
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const agentId = await memberId(seed, agent.personId);
    const adminId = await memberId(seed, admin.personId);
    const ownerId = await memberId(seed, seed.ownerId);

    const byAgent = await s.request('PATCH', `/v1/members/${adminId}`, { token: agent.token, body: { role: 'agent' } });
    assert.equal(byAgent.status, 403);
    assert.equal(byAgent.body.error.code, 'forbidden');
    assert.equal((await s.request('PATCH', `/v1/members/${agentId}`, { token: seed.apiKey, body: { role: 'admin' } })).status, 403);

    const promoted = await s.request('PATCH', `/v1/members/${agentId}`, { token: admin.token, body: { role: 'admin' } });
    assert.equal(promoted.status, 200);
    assert.equal(promoted.body.role, 'admin');
    assert.equal((await s.request('PATCH', `/v1/members/${agentId}`, { token: admin.token, body: { role: 'agent' } })).body.role, 'agent');

    const adminMakesOwner = await s.request('PATCH', `/v1/members/${agentId}`, { token: admin.token, body: { role: 'owner' } });
    assert.equal(adminMakesOwner.status, 403);
    assert.match(adminMakesOwner.body.error.message, /only an owner/);
    assert.equal((await s.request('PATCH', `/v1/members/${ownerId}`, { token: admin.token, body: { role: 'admin' } })).status, 403);

    const owned = await s.request('PATCH', `/v1/members/${adminId}`, { token: seed.ownerToken, body: { role: 'owner' } });
    assert.equal(owned.body.role, 'owner');
    // with two owners one may step down; the last one may not
    assert.equal((await s.request('PATCH', `/v1/members/${ownerId}`, { token: seed.ownerToken, body: { role: 'admin' } })).status, 200);
    const last = await s.request('PATCH', `/v1/members/${adminId}`, { token: admin.token, body: { role: 'admin' } });
    assert.equal(last.status, 409);
    assert.equal(last.body.error.code, 'last_owner');
    const roles = (await s.request('GET', '/v1/members', { token: admin.token })).body.data.map((m: { role: string }) => m.role);
    assert.deepEqual(roles, ['admin', 'owner', 'agent']);
  });

  test('bad input gets 400 and changes nothing; other workspaces’ members are 404', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const id = await memberId(seed, agent.personId);
    const other = await seedWorkspace(s.app);
    for (const body of [
      { role: 'boss' },
      { role: 'admin', extra: 1 },
      { inbox_ids: 'all' },
      { inbox_ids: [] },
      { inbox_ids: ['inb_nope'] },
      { role: 'admin', inbox_ids: [seed.inboxId] },
      [1],
    ]) {
      const r = await s.request('PATCH', `/v1/members/${id}`, { token: seed.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    assert.equal((await s.request('PATCH', `/v1/members/${id}`, { token: seed.ownerToken, body: { inbox_ids: [other.inboxId] } })).status, 400);
    const row = (await s.request('GET', '/v1/members', { token: seed.ownerToken })).body.data[1];
    assert.equal(row.role, 'agent');
    assert.equal(row.inbox_ids, null);
    assert.equal((await s.request('PATCH', `/v1/members/${id}`, { token: other.ownerToken, body: { role: 'admin' } })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/members/${id}`, { token: other.ownerToken })).status, 404);
    assert.equal((await s.request('DELETE', '/v1/members/mem_nope', { token: seed.ownerToken })).status, 404);
  });

  test('an agent limited to one inbox reaches only that inbox, like a key with an inbox limit', async () => {
    const seed = await seedWorkspace(s.app);
    const sales = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const inSupport = await feedback(seed);
    const inSales = await feedback(seed, sales.id);
    // Their notifications are told before the agent joins: told afterwards, the then unlimited agent
    // would rightly be notified of both conversations, and the notification would name the other inbox's.
    await s.app.jobs.drain();
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const id = await memberId(seed, agent.personId);
    const limited = await s.request('PATCH', `/v1/members/${id}`, { token: seed.ownerToken, body: { inbox_ids: [sales.id] } });
    assert.equal(limited.status, 200);
    assert.deepEqual(limited.body.inbox_ids, [sales.id]);

    assert.deepEqual(
      (await s.request('GET', '/v1/inboxes', { token: agent.token })).body.data.map((i: { id: string }) => i.id),
      [sales.id],
    );
    assert.equal((await s.request('GET', `/v1/inboxes/${seed.inboxId}`, { token: agent.token })).status, 404);
    const list = await s.request('GET', '/v1/conversations', { token: agent.token });
    assert.deepEqual(
      list.body.data.map((c: { id: string }) => c.id),
      [inSales],
    );
    assert.equal((await s.request('GET', `/v1/conversations/${inSupport}`, { token: agent.token })).status, 404);
    assert.equal((await s.request('PATCH', `/v1/conversations/${inSupport}`, { token: agent.token, body: { status: 'closed' } })).status, 404);
    assert.equal((await s.request('PATCH', `/v1/conversations/${inSales}`, { token: agent.token, body: { labels: ['vip'] } })).status, 200);
    const events = await s.request('GET', '/v1/events?after=0&limit=200', { token: agent.token });
    assert.ok(events.body.data.length > 0);
    assert.ok(events.body.data.every((e: { inbox_id?: string }) => e.inbox_id === undefined || e.inbox_id === sales.id));
    assert.ok(!JSON.stringify(events.body).includes(inSupport));

    // becoming an admin lifts the limit; back to agent, it stays lifted
    assert.equal((await s.request('PATCH', `/v1/members/${id}`, { token: seed.ownerToken, body: { role: 'admin' } })).body.inbox_ids, null);
    assert.equal((await s.request('GET', '/v1/conversations', { token: agent.token })).body.data.length, 2);
    assert.equal((await s.request('PATCH', `/v1/members/${id}`, { token: seed.ownerToken, body: { role: 'agent' } })).body.inbox_ids, null);
  });

  test('removing a member cuts their access at once, closes their sockets, and unassigns their open conversations', async () => {
    const seed = await seedWorkspace(s.app);
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const id = await memberId(seed, agent.personId);
    const open = await feedback(seed);
    const pending = await feedback(seed);
    const closed = await feedback(seed);
    for (const [cv, status] of [
      [open, 'open'],
      [pending, 'pending'],
      [closed, 'closed'],
    ]) {
      const r = await s.request('PATCH', `/v1/conversations/${cv}`, { token: seed.ownerToken, body: { assignee_id: agent.personId, status } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const socket = openSocket(s, agent.token);
    await socket.opened;
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 200);
    const seq = await lastEventSeq(s);

    const removed = await s.request('DELETE', `/v1/members/${id}`, { token: seed.ownerToken });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body, { member_id: id, unassigned_conversations: 2 });

    assert.equal(await socket.closed, 4403);
    assert.equal(socket.frames.at(-1)!.type, 'access_revoked');
    const refused = await s.request('GET', '/v1/workspace', { token: agent.token });
    assert.equal(refused.status, 403);
    assert.equal((await s.request('GET', '/v1/me', { token: agent.token })).status, 200, 'the account and session stay');

    const updates = (await eventsAfter(s, seq)).filter((e) => e.type === 'conversation.updated');
    assert.deepEqual(updates.map((e) => e.data.conversation.id).sort(), [open, pending].sort());
    assert.ok(updates.every((e) => e.data.conversation.assignee_id === null));
    const kept = await s.request('GET', `/v1/conversations/${closed}`, { token: seed.ownerToken });
    assert.equal(kept.body.assignee_id, agent.personId, 'closed conversations keep who handled them');
    assert.equal((await s.request('GET', `/v1/conversations/${open}`, { token: seed.ownerToken })).body.assignee_id, null);
  });

  test('a member may leave; admins cannot remove owners; the last owner can neither leave nor be removed', async () => {
    const seed = await seedWorkspace(s.app);
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    const other = await addPerson(s.app, seed.workspaceId, 'agent');
    const ownerId = await memberId(seed, seed.ownerId);
    const agentId = await memberId(seed, agent.personId);
    const otherId = await memberId(seed, other.personId);

    assert.equal((await s.request('DELETE', `/v1/members/${otherId}`, { token: agent.token })).status, 403, 'an agent removes only themselves');
    assert.equal((await s.request('DELETE', `/v1/members/${otherId}`, { token: seed.apiKey })).status, 403);
    const left = await s.request('DELETE', `/v1/members/${agentId}`, { token: agent.token });
    assert.equal(left.status, 200);
    assert.equal((await s.request('GET', '/v1/workspace', { token: agent.token })).status, 403);

    const adminRemovesOwner = await s.request('DELETE', `/v1/members/${ownerId}`, { token: admin.token });
    assert.equal(adminRemovesOwner.status, 403);
    const lastLeaves = await s.request('DELETE', `/v1/members/${ownerId}`, { token: seed.ownerToken });
    assert.equal(lastLeaves.status, 409);
    assert.equal(lastLeaves.body.error.code, 'last_owner');
    assert.equal((await s.request('GET', '/v1/workspace', { token: seed.ownerToken })).status, 200);

    assert.equal((await s.request('DELETE', `/v1/members/${otherId}`, { token: admin.token })).status, 200);
    const names = (await s.request('GET', '/v1/members', { token: seed.ownerToken })).body.data.map((m: { person_id: string }) => m.person_id);
    assert.deepEqual(names, [seed.ownerId, admin.personId]);
  });

  test('two owners demoting each other at the same moment leave one owner', async () => {
    const seed = await seedWorkspace(s.app);
    const second = await addPerson(s.app, seed.workspaceId, 'owner');
    const firstId = await memberId(seed, seed.ownerId);
    const secondId = await memberId(seed, second.personId);
    // Below HTTP, so that both transactions really run at once.
    const asOwner = (personId: string) => memberAccess(seed.workspaceId, personId, 'owner', 'ses_x');
    const results = await Promise.allSettled([
      updateMember(s.app, asOwner(seed.ownerId), secondId, { role: 'agent' }),
      updateMember(s.app, asOwner(second.personId), firstId, { role: 'agent' }),
    ]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    const refusal = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
    assert.equal(refusal.code, 'last_owner');
    const owners = await s.app.db.selectFrom('memberships').select('id').where('workspace_id', '=', seed.workspaceId).where('role', '=', 'owner').execute();
    assert.equal(owners.length, 1);
  });

  test('a role change closes the member’s sockets so they reconnect with the new access', async () => {
    const seed = await seedWorkspace(s.app);
    const admin = await addPerson(s.app, seed.workspaceId, 'admin');
    const socket = openSocket(s, admin.token);
    await socket.opened;
    const r = await s.request('PATCH', `/v1/members/${await memberId(seed, admin.personId)}`, { token: seed.ownerToken, body: { role: 'agent' } });
    assert.equal(r.status, 200);
    assert.equal(await socket.closed, 4403);
    assert.equal((await s.request('GET', '/v1/api-keys', { token: admin.token })).status, 403);
  });
});
