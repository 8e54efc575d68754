// Ratings in the chat widget: a chat conversation closed by a member asks once in the widget (no
// mail); the visitor answers once; another visitor's session cannot read or answer it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ORIGIN = 'https://shop.example.com';

describe('satisfaction ratings in the chat widget', () => {
  let s: TestServer;
  let seed: Seed;
  let publicKey: string;

  before(async () => {
    s = await startTestServer({ clock: new ManualClock('2026-11-04T09:00:00Z') });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    publicKey = (
      await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN], allowAnonymous: true })
    ).public_key!;
    await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/ratings`, { token: seed.apiKey, body: { enabled: true } });
  });
  after(() => s.stop());

  const visitor = (method: string, path: string, token?: string, body?: unknown) => s.request(method, path, { token, body, headers: { origin: ORIGIN } });
  async function visitorWithConversation(text: string) {
    const session = await visitor('POST', '/v1/widget/sessions', undefined, { public_key: publicKey });
    const started = await visitor('POST', '/v1/widget/conversations', session.body.token, { body: text });
    assert.equal(started.status, 201);
    return { token: session.body.token as string, conversationId: started.body.conversation.id as string };
  }

  test('asked once after a member closes; answered once; other sessions see nothing', async () => {
    const v = await visitorWithConversation('Hello');
    const rating = () => visitor('GET', `/v1/widget/conversations/${v.conversationId}/rating`, v.token);
    assert.deepEqual((await rating()).body, { asked: false, rating: null });
    assert.equal(
      (await visitor('POST', `/v1/widget/conversations/${v.conversationId}/rating`, v.token, { score: 5 })).status,
      409,
      'nothing to answer before the close',
    );

    await s.request('PATCH', `/v1/conversations/${v.conversationId}`, { token: seed.ownerToken, body: { status: 'closed' } });
    assert.deepEqual((await rating()).body, { asked: true, rating: null });
    assert.deepEqual(
      await s.app.db.selectFrom('jobs').select('id').where('kind', '=', 'rating.request').execute(),
      [],
      'a chat is asked in the widget, not by mail',
    );

    const other = await visitorWithConversation('Someone else');
    assert.equal((await visitor('GET', `/v1/widget/conversations/${v.conversationId}/rating`, other.token)).status, 404);
    assert.equal((await visitor('POST', `/v1/widget/conversations/${v.conversationId}/rating`, other.token, { score: 1 })).status, 404);
    assert.equal((await visitor('POST', `/v1/widget/conversations/${v.conversationId}/rating`, v.token, { score: 6 })).status, 400);

    const answered = await visitor('POST', `/v1/widget/conversations/${v.conversationId}/rating`, v.token, { score: 4, comment: 'Nice' });
    assert.equal(answered.status, 200);
    assert.deepEqual(answered.body, { asked: false, rating: { score: 4, comment: 'Nice' } });
    assert.deepEqual((await rating()).body, { asked: false, rating: { score: 4, comment: 'Nice' } });
    const again = await visitor('POST', `/v1/widget/conversations/${v.conversationId}/rating`, v.token, { score: 1 });
    assert.equal(again.status, 409);
    assert.equal((await s.request('GET', `/v1/conversations/${v.conversationId}`, { token: seed.apiKey })).body.rating.score, 4);
  });
});
