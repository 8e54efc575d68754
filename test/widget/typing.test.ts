// Typing signals: the visitor's reach the team's realtime stream, the team's reach the visitor's
// socket; both are realtime-only (no webhook delivery), throttled per typist, refused for
// conversations the caller cannot see, and removed by their retention rule after 10 minutes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { streamPosition } from '../../src/events/service.js';
import { retentionRules } from '../../src/lifecycle/registry.js';
import { ManualClock, MINUTE } from '../../src/platform/clock.js';
import { TYPING_MIN_INTERVAL_MS } from '../../src/typing/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';

describe('typing signals', () => {
  let s: TestServer;
  let clock: ManualClock;
  let seed: Seed;
  let publicKey: string;

  before(async () => {
    clock = new ManualClock('2026-06-01T09:00:00Z');
    s = await startTestServer({ clock });
    seed = await seedWorkspace(s.app);
    publicKey = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN], allowAnonymous: true })
    ).public_key!;
  });
  after(() => s.stop());

  const visitor = (method: string, path: string, token?: string, body?: unknown) => s.request(method, path, { token, body, headers: { origin: ORIGIN } });

  async function visitorWithConversation(text: string) {
    const session = await visitor('POST', '/v1/widget/sessions', undefined, { public_key: publicKey });
    assert.equal(session.status, 201);
    const started = await visitor('POST', '/v1/widget/conversations', session.body.token, { body: text });
    assert.equal(started.status, 201);
    return { token: session.body.token as string, conversationId: started.body.conversation.id as string };
  }

  const typingRows = () =>
    s.app.db.selectFrom('events').selectAll().where('type', '=', 'typing').where('workspace_id', '=', seed.workspaceId).orderBy('seq').execute();

  test('the visitor types: a realtime-only event the team sees, throttled, and no webhook delivery', async () => {
    const v = await visitorWithConversation('Hello');
    const before = (await typingRows()).length;

    const first = await visitor('POST', `/v1/widget/conversations/${v.conversationId}/typing`, v.token);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { stored: true });
    assert.deepEqual((await visitor('POST', `/v1/widget/conversations/${v.conversationId}/typing`, v.token)).body, { stored: false });
    clock.advance(TYPING_MIN_INTERVAL_MS);
    assert.deepEqual((await visitor('POST', `/v1/widget/conversations/${v.conversationId}/typing`, v.token)).body, { stored: true });

    const rows = await typingRows();
    assert.equal(rows.length, before + 2);
    const last = rows.at(-1)!;
    assert.equal(last.webhook, 0, 'never a webhook event (the outbox skips events with webhook = 0)');
    assert.deepEqual(JSON.parse(last.data).conversation.id, v.conversationId);
    assert.equal(JSON.parse(last.data).author.type, 'contact');
    const deliveries = await s.app.db
      .selectFrom('webhook_deliveries')
      .select('event_seq')
      .where(
        'event_seq',
        'in',
        rows.map((r) => r.seq),
      )
      .execute();
    assert.deepEqual(deliveries, []);

    // The team's event stream shows it (from its stream position: on Postgres that is assigned at
    // commit and is not the sequence number).
    const events = await s.request('GET', `/v1/events?after=${streamPosition(last) - 1}`, { token: seed.ownerToken });
    assert.equal(events.status, 200);
    assert.ok(events.body.data.some((e: any) => e.type === 'typing' && e.data.conversation.id === v.conversationId && e.data.author.type === 'contact'));
  });

  test('a visitor cannot signal in a conversation that is not theirs; a member only in one they can see', async () => {
    const a = await visitorWithConversation('Mine');
    const b = await visitorWithConversation('Theirs');
    const refused = await visitor('POST', `/v1/widget/conversations/${b.conversationId}/typing`, a.token);
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error.code, 'not_found');
    assert.equal((await visitor('POST', `/v1/widget/conversations/${a.conversationId}/typing`)).status, 401);
    assert.equal((await s.request('POST', '/v1/conversations/cv_nope/typing', { token: seed.ownerToken })).status, 404);
    const other = await seedWorkspace(s.app);
    assert.equal((await s.request('POST', `/v1/conversations/${a.conversationId}/typing`, { token: other.ownerToken })).status, 404);
    assert.equal((await s.request('POST', `/v1/conversations/${a.conversationId}/typing`, { token: seed.apiKey })).status, 403);
  });

  test('the team types: the visitor’s socket gets a typing frame; the visitor’s own signals are not echoed', async () => {
    const v = await visitorWithConversation('Anyone there?');
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${v.token}`, { headers: { origin: ORIGIN } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await waitFor(() => frames.some((f) => f.type === 'hello'));
    clock.advance(TYPING_MIN_INTERVAL_MS);
    assert.equal((await visitor('POST', `/v1/widget/conversations/${v.conversationId}/typing`, v.token)).status, 200);
    const member = await s.request('POST', `/v1/conversations/${v.conversationId}/typing`, { token: seed.ownerToken });
    assert.equal(member.status, 200);
    assert.deepEqual(member.body, { stored: true });
    await waitFor(() => frames.some((f) => f.type === 'typing'));
    const typing = frames.filter((f) => f.type === 'typing');
    assert.equal(typing.length, 1);
    assert.equal(typing[0].conversation_id, v.conversationId);
    assert.equal(typeof typing[0].seq, 'number');
    ws.close();
  });

  test('the retention rule removes typing signals older than 10 minutes and nothing else', async () => {
    const v = await visitorWithConversation('Later');
    clock.advance(TYPING_MIN_INTERVAL_MS);
    await visitor('POST', `/v1/widget/conversations/${v.conversationId}/typing`, v.token);
    const messagesBefore = await s.app.db.selectFrom('events').select('seq').where('type', '=', 'message.created').execute();
    assert.ok((await typingRows()).length > 0);
    clock.advance(10 * MINUTE + 1000);
    const rule = retentionRules.find((r) => r.name === 'typing_signals')!;
    await rule.deleteBatch(s.app, clock.now(), 500);
    assert.deepEqual(await typingRows(), []);
    const messagesAfter = await s.app.db.selectFrom('events').select('seq').where('type', '=', 'message.created').execute();
    assert.equal(messagesAfter.length, messagesBefore.length);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
