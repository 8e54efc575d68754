import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { eventsAfter, lastEventSeq } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('POST /v1/feedback', () => {
  let s: TestServer;
  let seed: Seed;

  before(async () => {
    s = await startTestServer();
    seed = await seedWorkspace(s.app);
  });
  after(() => s.stop());

  test('starts a feedback conversation and records conversation.created, message.created and feedback.created', async () => {
    const seq = await lastEventSeq(s);
    const r = await s.request('POST', '/v1/feedback', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        contact: { external_id: 'app-user-7', email: 'App@User.example', name: 'App User' },
        subject: 'Love it',
        body: 'The new release is great.',
        metadata: { app_version: '2.1', rating: 5 },
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.conversation.source, 'feedback');
    assert.equal(r.body.conversation.inbox_id, seed.inboxId);
    assert.equal(r.body.message.direction, 'in');
    assert.deepEqual(r.body.message.details, { feedback: true, metadata: { app_version: '2.1', rating: 5 } });
    assert.deepEqual(r.body.contact.external_ids, [{ inbox_id: seed.inboxId, external_id: 'app-user-7' }]);
    assert.deepEqual(r.body.contact.emails, ['app@user.example']);
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => e.type),
      ['conversation.created', 'message.created', 'feedback.created'],
    );
    for (const e of events) {
      assert.equal(e.inbox_id, seed.inboxId);
      assert.equal(e.contact_id, r.body.contact.id);
    }
    const fb = events[2].data;
    assert.deepEqual(Object.keys(fb).sort(), ['contact', 'conversation', 'message']);
    assert.equal(fb.message.id, r.body.message.id);
    assert.equal(fb.conversation.id, r.body.conversation.id);

    // The same external id finds the same contact; no contact at all makes an anonymous one.
    const again = await s.request('POST', '/v1/feedback', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, contact: { external_id: 'app-user-7' }, body: 'More' },
    });
    assert.equal(again.body.contact.id, r.body.contact.id);
    assert.notEqual(again.body.conversation.id, r.body.conversation.id);
    const anon = await s.request('POST', '/v1/feedback', { token: seed.apiKey, body: { inbox_id: seed.inboxId, body: 'Anonymous note' } });
    assert.equal(anon.status, 201);
    assert.deepEqual(anon.body.contact.emails, []);
  });

  test('refusals: empty body, unknown or unreachable inbox, missing scope, oversized metadata', async () => {
    const other = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Other' });
    const limited = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'l', inboxIds: [seed.inboxId] })).secret;
    const readOnly = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'r', scopes: ['conversations:read'] })).secret;
    const seq = await lastEventSeq(s);
    const cases: [string, unknown, number][] = [
      [seed.apiKey, { inbox_id: seed.inboxId, body: '' }, 400],
      [seed.apiKey, { inbox_id: seed.inboxId, body: '   ' }, 400],
      [seed.apiKey, { inbox_id: 'inb_nope', body: 'x' }, 404],
      [limited, { inbox_id: other.id, body: 'x' }, 404],
      [readOnly, { inbox_id: seed.inboxId, body: 'x' }, 403],
      [seed.apiKey, { inbox_id: seed.inboxId, body: 'x', metadata: { big: 'x'.repeat(20_000) } }, 400],
      [seed.apiKey, { inbox_id: seed.inboxId, body: 'x', contact: { id: 'ct_nope' } }, 404],
      [seed.apiKey, { inbox_id: seed.inboxId, body: 'x', surprise: 1 }, 400],
    ];
    for (const [token, body, status] of cases) {
      const r = await s.request('POST', '/v1/feedback', { token, body });
      assert.equal(r.status, status, JSON.stringify(body));
    }
    assert.deepEqual(await eventsAfter(s, seq), []);
    const convs = await s.app.db.selectFrom('conversations').select('id').where('inbox_id', '=', other.id).execute();
    assert.equal(convs.length, 0);
  });
});
