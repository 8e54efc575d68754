import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { memberAccess } from '../../src/auth/access.js';
import { createChatChannel } from '../../src/channels/service.js';
import { loadConfig } from '../../src/config.js';
import { buildServices } from '../../src/context.js';
import { updateConversation } from '../../src/conversations/changes.js';
import { retentionRules } from '../../src/lifecycle/registry.js';
import { DAY, ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import { isContactOnline } from '../../src/realtime/connections.js';
import { identityHash } from '../../src/widget/service.js';
import { addPerson, type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';

describe('chat widget (visitor API)', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  let publicKey: string;
  let anonKey: string;

  before(async () => {
    clock = new ManualClock('2026-06-01T09:00:00Z');
    s = await startTestServer({ clock });
    seed = await seedWorkspace(s.app);
    publicKey = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN], greeting: 'Hello there' })
    ).public_key!;
    anonKey = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Anon widget', origins: [ORIGIN], allowAnonymous: true })
    ).public_key!;
  });
  after(() => s.stop());

  const visitor = (method: string, path: string, opts: { token?: string; body?: unknown; origin?: string | null } = {}) =>
    s.request(method, path, { token: opts.token, body: opts.body, headers: opts.origin === null ? {} : { origin: opts.origin ?? ORIGIN } });

  async function session(body: Record<string, unknown>) {
    const r = await visitor('POST', '/v1/widget/sessions', { body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { token: string; contact_id: string; verified: boolean; expires_at: string };
  }

  test('config: the greeting and settings for an allowed origin; others refused', async () => {
    const r = await visitor('GET', `/v1/widget/config?public_key=${publicKey}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.channel.greeting, 'Hello there');
    assert.equal(r.body.channel.ask_email_offline, true);
    assert.equal(r.body.inbox.name, 'Support');
    assert.equal(r.body.team_online, false);
    assert.equal(r.headers.get('access-control-allow-origin'), ORIGIN);
    const evil = await visitor('GET', `/v1/widget/config?public_key=${publicKey}`, { origin: 'https://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(evil.body.error.code, 'origin_not_allowed');
    assert.equal((await visitor('GET', '/v1/widget/config?public_key=svc_pk_nope')).status, 404);
    const pre = await fetch(`${s.url}/v1/widget/sessions`, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.match(pre.headers.get('access-control-allow-headers')!, /authorization/);
  });

  test('a channel without anonymous visitors needs an address; bad input is refused', async () => {
    const r = await visitor('POST', '/v1/widget/sessions', { body: { public_key: publicKey } });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'identity_required');
    assert.equal((await visitor('POST', '/v1/widget/sessions', { body: { public_key: publicKey, email: 'not-an-address' } })).status, 400);
    assert.equal((await visitor('POST', '/v1/widget/sessions', { body: { public_key: publicKey, email: 'a@b.example', extra: 1 } })).status, 400);
    const anon = await session({ public_key: anonKey });
    assert.equal(anon.verified, false);
  });

  test('a visitor starts a conversation, the team answers, the visitor sees the answer (not the note) live and in the list', async () => {
    const v = await session({ public_key: publicKey, email: 'visitor@example.com', name: 'Vera' });
    const started = await visitor('POST', '/v1/widget/conversations', { token: v.token, body: { body: 'Where is my order?' } });
    assert.equal(started.status, 201);
    const conversationId = started.body.conversation.id;
    assert.deepEqual(started.body.conversation.latest, { text: 'Where is my order?', from: 'contact' });
    const events = await s.app.db.selectFrom('events').select(['type', 'contact_id']).where('workspace_id', '=', seed.workspaceId).orderBy('seq').execute();
    assert.ok(events.some((e) => e.type === 'conversation.created' && e.contact_id === v.contact_id));
    assert.ok(events.some((e) => e.type === 'message.created' && e.contact_id === v.contact_id));

    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${v.token}`, { headers: { origin: ORIGIN } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => frames.some((f) => f.type === 'hello'));
    assert.equal(await isContactOnline(s.app, v.contact_id), true);
    const conv = await s.request('GET', `/v1/conversations/${conversationId}`, { token: seed.apiKey });
    assert.equal(conv.body.source ?? conv.body.conversation?.source, 'chat');

    const note = await s.request('POST', `/v1/conversations/${conversationId}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'note', body: 'internal: check the warehouse' },
    });
    assert.equal(note.status, 201, JSON.stringify(note.body));
    const reply = await s.request('POST', `/v1/conversations/${conversationId}/messages`, { token: seed.ownerToken, body: { body: 'It ships today.' } });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    await waitFor(() => frames.some((f) => f.type === 'message' && f.message.body === 'It ships today.'));
    assert.ok(!frames.some((f) => f.type === 'message' && /internal/.test(f.message.body)), 'notes never reach the visitor');
    const live = frames.find((f) => f.type === 'message' && f.message.body === 'It ships today.');
    assert.equal(live.message.direction, 'out');
    assert.equal(live.message.author.type, 'team');

    const list = await visitor('GET', `/v1/widget/conversations/${conversationId}/messages`, { token: v.token });
    assert.deepEqual(
      list.body.data.map((m: { body: string }) => m.body),
      ['Where is my order?', 'It ships today.'],
    );
    // The list shows the latest message the visitor can read: the team's answer; a later note changes nothing.
    const latest = async () =>
      (await visitor('GET', '/v1/widget/conversations', { token: v.token })).body.data.find((c: { id: string }) => c.id === conversationId).latest;
    assert.deepEqual(await latest(), { text: 'It ships today.', from: 'team' });
    await s.request('POST', `/v1/conversations/${conversationId}/messages`, { token: seed.ownerToken, body: { kind: 'note', body: 'internal: shipped' } });
    assert.deepEqual(await latest(), { text: 'It ships today.', from: 'team' });
    await visitor('POST', `/v1/widget/conversations/${conversationId}/messages`, { token: v.token, body: { body: 'Thanks!\n\nSee   you' } });
    assert.deepEqual(await latest(), { text: 'Thanks! See you', from: 'contact' });
    ws.close();
    await waitFor(async () => !(await isContactOnline(s.app, v.contact_id)));
  });

  test('a change recorded by another process reaches the visitor’s socket', async () => {
    const v = await session({ public_key: publicKey, email: 'elsewhere@example.com' });
    const started = await visitor('POST', '/v1/widget/conversations', { token: v.token, body: { body: 'Anyone there?' } });
    const conversationId = started.body.conversation.id;
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${v.token}`, { headers: { origin: ORIGIN } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => frames.some((f) => f.type === 'hello'));
    // Another process on the same database (a command, a second server): its own services, its own signals.
    const other = buildServices(loadConfig(s.env), { log: createLogger({ level: 'error', write: () => {} }), clock });
    try {
      await updateConversation(other, memberAccess(seed.workspaceId, seed.ownerId, 'owner', 'elsewhere'), conversationId, { status: 'closed' });
    } finally {
      await other.close();
    }
    // Only the stream watch announces another process's commit here (how soon is not timed: a
    // loaded machine may take seconds).
    await waitFor(() => frames.some((f) => f.type === 'conversation' && f.conversation.id === conversationId && f.conversation.status === 'closed'), 20_000);
    ws.close();
  });

  test('a closed conversation reopens when the visitor writes again', async () => {
    const v = await session({ public_key: publicKey, email: 'again@example.com' });
    const started = await visitor('POST', '/v1/widget/conversations', { token: v.token, body: { body: 'Hi' } });
    const id = started.body.conversation.id;
    await s.request('PATCH', `/v1/conversations/${id}`, { token: seed.apiKey, body: { status: 'closed' } });
    const w = await visitor('POST', `/v1/widget/conversations/${id}/messages`, { token: v.token, body: { body: 'One more thing' } });
    assert.equal(w.status, 201);
    const list = await visitor('GET', '/v1/widget/conversations', { token: v.token });
    assert.equal(list.body.data.find((c: { id: string }) => c.id === id).status, 'open');
  });

  test('claiming an address does not reveal that contact’s other conversations', async () => {
    const first = await session({ public_key: publicKey, email: 'victim@example.com' });
    const started = await visitor('POST', '/v1/widget/conversations', { token: first.token, body: { body: 'my private question' } });
    const impostor = await session({ public_key: publicKey, email: 'victim@example.com' });
    // An unproven address never joins another contact (issue 32): each claim is a contact of its own.
    assert.notEqual(impostor.contact_id, first.contact_id);
    assert.deepEqual((await visitor('GET', '/v1/widget/conversations', { token: impostor.token })).body.data, []);
    const peek = await visitor('GET', `/v1/widget/conversations/${started.body.conversation.id}/messages`, { token: impostor.token });
    assert.equal(peek.status, 404);
    const write = await visitor('POST', `/v1/widget/conversations/${started.body.conversation.id}/messages`, { token: impostor.token, body: { body: 'x' } });
    assert.equal(write.status, 404);
  });

  test('an identity proven with the inbox identity secret sees all of its conversations in the inbox; a wrong proof is refused', async () => {
    const rotated = await s.request('POST', `/v1/inboxes/${seed.inboxId}/identity-secret`, { token: seed.ownerToken });
    assert.equal(rotated.status, 200);
    const secret = rotated.body.identity_secret as string;
    const agent = await addPerson(s.app, seed.workspaceId, 'agent');
    assert.equal((await s.request('POST', `/v1/inboxes/${seed.inboxId}/identity-secret`, { token: agent.token })).status, 403);
    const wrong = await visitor('POST', '/v1/widget/sessions', { body: { public_key: publicKey, external_id: 'user-42', identity_hash: 'f'.repeat(64) } });
    assert.equal(wrong.status, 401);
    const a = await session({ public_key: publicKey, external_id: 'user-42', identity_hash: identityHash(secret, 'user-42'), email: 'u42@example.com' });
    assert.equal(a.verified, true);
    await visitor('POST', '/v1/widget/conversations', { token: a.token, body: { body: 'from my laptop' } });
    const b = await session({ public_key: publicKey, external_id: 'user-42', identity_hash: identityHash(secret, 'user-42') });
    assert.equal(b.contact_id, a.contact_id);
    const seen = await visitor('GET', '/v1/widget/conversations', { token: b.token });
    assert.equal(seen.body.data.length, 1);
  });

  test('sessions expire 7 days after last use, slide while used, and the retention rule removes them', async () => {
    const v = await session({ public_key: publicKey, email: 'idle@example.com' });
    clock.advance(6 * DAY);
    assert.equal((await visitor('GET', '/v1/widget/conversations', { token: v.token })).status, 200);
    clock.advance(6 * DAY);
    assert.equal((await visitor('GET', '/v1/widget/conversations', { token: v.token })).status, 200, 'used within 7 days: still alive');
    clock.advance(7 * DAY + 1000);
    assert.equal((await visitor('GET', '/v1/widget/conversations', { token: v.token })).status, 401);
    // The server's hourly retention job may have run the rule already when the clock moved.
    const rule = retentionRules.find((r) => r.name === 'contact_sessions')!;
    await rule.deleteBatch(s.app, clock.now(), 1000);
    const left = await s.app.db.selectFrom('contact_sessions').select('id').where('expires_at', '<=', clock.now().toISOString()).execute();
    assert.equal(left.length, 0);
  });

  test('a deleted workspace’s public key and visitor sessions stop at once', async () => {
    const other = await seedWorkspace(s.app);
    const key = (await createChatChannel(s.app, { workspaceId: other.workspaceId, inboxId: other.inboxId, name: 'W', origins: [ORIGIN], allowAnonymous: true }))
      .public_key!;
    const v = await session({ public_key: key });
    await s.app.db.updateTable('workspaces').set({ deleted_at: clock.now().toISOString() }).where('id', '=', other.workspaceId).execute();
    assert.equal((await visitor('GET', '/v1/widget/conversations', { token: v.token })).status, 401);
    assert.equal((await visitor('POST', '/v1/widget/sessions', { body: { public_key: key } })).status, 404);
  });

  test('a wrong origin with a valid token is refused', async () => {
    const v = await session({ public_key: publicKey, email: 'origin@example.com' });
    assert.equal((await visitor('GET', '/v1/widget/conversations', { token: v.token, origin: 'https://evil.example' })).status, 403);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
