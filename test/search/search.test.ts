import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { seedConversations } from '../helpers/lifecycle.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('GET /v1/search', () => {
  let s: TestServer;
  let seed: Seed;
  let other: Seed;
  let billingAddress: string;
  let supportAddress: string;
  let limitedKey: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    seed = await seedWorkspace(s.app);
    other = await seedWorkspace(s.app);
    supportAddress = (await seedEmailChannel(s.app, seed)).address!;
    const billing = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' });
    billingAddress = (await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: billing.id })).address!;
    limitedKey = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'support only', inboxIds: [seed.inboxId] })).secret;
  });
  after(() => s.stop());

  const find = async (q: string, token = seed.ownerToken) => {
    const r = await s.request('GET', `/v1/search?q=${encodeURIComponent(q)}`, { token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as {
      conversations: { conversation: { id: string; inbox_id: string }; message_id: string; snippet: string }[];
      contacts: { id: string; emails: string[] }[];
    };
  };

  test('finds conversations by words in bodies and subjects, by prefix, every word required', async () => {
    const printer = await deliverMail(
      s,
      supportAddress,
      { From: 'Pat <pat@search.example>', Subject: 'Printer trouble' },
      'The laserjet in room 4 smells of smoke since Tuesday.\r\n',
    );
    await deliverMail(s, supportAddress, { From: 'quinn@search.example', Subject: 'Smoke alarm' }, 'Our alarm beeps at night.\r\n');
    const bySubject = await find('printer');
    assert.deepEqual(
      bySubject.conversations.map((c) => c.conversation.id),
      [printer.conversation_id],
    );
    const byPrefix = await find('laser');
    assert.equal(byPrefix.conversations[0]?.conversation.id, printer.conversation_id);
    assert.match(byPrefix.conversations[0].snippet, /laserjet in room 4/);
    assert.equal((await find('smoke')).conversations.length, 2);
    assert.deepEqual(
      (await find('smoke tuesday')).conversations.map((c) => c.conversation.id),
      [printer.conversation_id],
      'every word must match',
    );
    assert.equal((await find('nonexistentword')).conversations.length, 0);
    const turkish = await deliverMail(s, supportAddress, { From: 'ayse@search.example', Subject: 'Sipariş' }, 'Siparişim nerede kaldı?\r\n');
    assert.equal((await find('siparişim')).conversations[0]?.conversation.id, turkish.conversation_id);
  });

  test('a word in the subject ranks above the same word only in a body; whole words and prefixes both match', async () => {
    const inSubject = await deliverMail(s, supportAddress, { From: 'kim@search.example', Subject: 'Kangaroo loose' }, 'See the subject.\r\n');
    const inBody = await deliverMail(s, supportAddress, { From: 'lee@search.example', Subject: 'Question' }, 'Our kangaroo escaped again.\r\n');
    const plural = await deliverMail(s, supportAddress, { From: 'max@search.example', Subject: 'Zoo' }, 'Two kangaroos next door.\r\n');
    const whole = await find('kangaroo');
    assert.deepEqual(
      whole.conversations.map((c) => c.conversation.id),
      [inSubject.conversation_id, plural.conversation_id, inBody.conversation_id],
      'the subject counts more, though both body matches are newer; "kangaroo" also begins "kangaroos"; newer first on a tie',
    );
    assert.equal((await find('kanga')).conversations.length, 3);
    assert.deepEqual(
      (await find('kangaroos')).conversations.map((c) => c.conversation.id),
      [plural.conversation_id],
    );
  });

  test('notes are found; the index follows edits and deletions in the same transaction', async () => {
    const c = await deliverMail(s, supportAddress, { From: 'rita@search.example', Subject: 'Refund' }, 'Please refund me.\r\n');
    const note = await s.request('POST', `/v1/conversations/${c.conversation_id}/messages`, {
      token: seed.ownerToken,
      body: { kind: 'note', body: 'Escalated to finance (ticket zebracorn).' },
    });
    assert.equal(note.status, 201);
    assert.equal((await find('zebracorn')).conversations[0]?.message_id, note.body.id);
    // Status changes are internal event lines, not searchable text.
    await s.request('PATCH', `/v1/conversations/${c.conversation_id}`, { token: seed.ownerToken, body: { status: 'closed' } });
    assert.equal((await find('status')).conversations.filter((x) => x.conversation.id === c.conversation_id).length, 0);
    // Deleting the contact deletes the conversation, and the index with it.
    const contactId = (await s.request('GET', `/v1/conversations/${c.conversation_id}`, { token: seed.ownerToken })).body.contact_id;
    assert.equal((await s.request('DELETE', `/v1/contacts/${contactId}`, { token: seed.ownerToken })).status, 200);
    assert.equal((await find('zebracorn')).conversations.length, 0);
  });

  test('only what the caller reaches: inbox limits and other workspaces', async () => {
    const billing = await deliverMail(s, billingAddress, { From: 'sam@search.example', Subject: 'Invoice wombat' }, 'Invoice question.\r\n');
    assert.equal((await find('wombat')).conversations[0]?.conversation.id, billing.conversation_id);
    assert.equal((await find('wombat', limitedKey)).conversations.length, 0, 'a key limited to Support does not see Billing');
    assert.equal((await find('wombat', other.apiKey)).conversations.length, 0, 'another workspace sees nothing');
  });

  test('contacts by name or address, only with contacts:read', async () => {
    await deliverMail(s, supportAddress, { From: 'Tamsin Quartermain <tamsin@search.example>', Subject: 'hello' });
    const r = await find('quartermain');
    assert.equal(r.contacts.length, 1);
    assert.deepEqual(r.contacts[0].emails, ['tamsin@search.example']);
    const narrow = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'conv only', scopes: ['conversations:read'] })).secret;
    assert.deepEqual((await find('quartermain', narrow)).contacts, []);
  });

  test('a rare word in the newest message and in one written thousands of messages before: both found', async () => {
    // On Postgres the newest 2,000 messages are read first; one match there says the word is rare,
    // and the GIN index then finds the older one (src/search/service.ts).
    const older = await deliverMail(s, supportAddress, { From: 'old@search.example', Subject: 'Axolotl tank' }, 'The axolotl tank leaks.\r\n');
    await seedConversations(s.app, s.env.SVC_DATA_DIR, { workspaceId: seed.workspaceId, inboxId: seed.inboxId }, 2_100);
    const newer = await deliverMail(s, supportAddress, { From: 'new@search.example', Subject: 'Tank again' }, 'The axolotl is fine now.\r\n');
    assert.deepEqual((await find('axolotl')).conversations.map((c) => c.conversation.id).sort(), [older.conversation_id, newer.conversation_id].sort());
    assert.deepEqual(
      (await find('axolo')).conversations.map((c) => c.conversation.id).sort(),
      [older.conversation_id, newer.conversation_id].sort(),
      'as a prefix too',
    );
  });

  test('hostile or empty queries: a clear 400 or no match, never a 500', async () => {
    for (const q of ['"', '*', 'a" OR "b', 'NEAR(x y)', "'; drop table messages; --", '()*:&|!', 'x'.repeat(200)]) {
      const r = await s.request('GET', `/v1/search?q=${encodeURIComponent(q)}`, { token: seed.ownerToken });
      assert.ok(r.status === 200 || r.status === 400, `${q}: ${r.status}`);
    }
    const empty = await s.request('GET', `/v1/search?q=${encodeURIComponent('*** !!!')}`, { token: seed.ownerToken });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, 'invalid_request');
    assert.equal((await s.request('GET', `/v1/search?q=${'x'.repeat(201)}`, { token: seed.ownerToken })).status, 400);
    assert.equal((await s.request('GET', '/v1/search?q=printer')).status, 401);
  });
});
