// Account deletion (DELETE /v1/me, svc person delete) and the Web Push subscriptions a person owns.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addMember } from '../../src/members/store.js';
import { createSession, findOrCreatePerson } from '../../src/people/service.js';
import { generateVapidKeys } from '../../src/push/commands.js';
import { PUSH_SUBSCRIPTIONS_PER_PERSON } from '../../src/push/service.js';
import { addPerson, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, seedEmailChannel } from '../helpers/mail.js';
import { runSvc, startTestServer, type TestServer } from '../helpers/server.js';

const vapid = generateVapidKeys();
const validKey = () => generateVapidKeys().publicKey;
const auth = Buffer.alloc(16, 1).toString('base64url');
const sub = (n: string | number, extra: Record<string, unknown> = {}) => ({
  endpoint: `https://fcm.example.net/wp/${n}`,
  keys: { p256dh: validKey(), auth },
  ...extra,
});

describe('accounts and push subscriptions', () => {
  let s: TestServer;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET, SVC_VAPID_PUBLIC_KEY: vapid.publicKey, SVC_VAPID_PRIVATE_KEY: vapid.privateKey } });
    await s.app.jobs.stop();
  });
  after(() => s.stop());

  test('push subscriptions: register, renew, list without keys, remove; bad input is refused', async () => {
    const ws = await seedWorkspace(s.app);
    const key = await s.request('GET', '/v1/push/key', { token: ws.ownerToken });
    assert.deepEqual(key.body, { enabled: true, vapid_public_key: vapid.publicKey });
    const first = await s.request('POST', '/v1/me/push-subscriptions', { token: ws.ownerToken, body: sub('one', { user_agent: 'Firefox' }) });
    assert.equal(first.status, 201);
    assert.match(first.body.id, /^push_/);
    assert.equal(first.body.keys, undefined, 'keys are never shown');
    const renewed = await s.request('POST', '/v1/me/push-subscriptions', {
      token: ws.ownerToken,
      body: sub('one', { expiration_time: Date.now() + 86_400_000 }),
    });
    assert.equal(renewed.status, 201);
    assert.equal(renewed.body.id, first.body.id, 'the same endpoint is one subscription');
    assert.ok(renewed.body.expiration_time);
    await s.request('POST', '/v1/me/push-subscriptions', { token: ws.ownerToken, body: sub('two') });
    const list = await s.request('GET', '/v1/me/push-subscriptions?limit=1', { token: ws.ownerToken });
    assert.equal(list.body.data.length, 1);
    assert.ok(list.body.next_cursor);
    const page2 = await s.request('GET', `/v1/me/push-subscriptions?limit=1&cursor=${list.body.next_cursor}`, { token: ws.ownerToken });
    assert.equal(page2.body.data[0].id, first.body.id);

    const bad = [
      { endpoint: 'http://fcm.example.net/wp/x', keys: { p256dh: validKey(), auth } },
      { endpoint: 'https://127.0.0.1/wp/x', keys: { p256dh: validKey(), auth } },
      { endpoint: 'https://[::1]/wp/x', keys: { p256dh: validKey(), auth } },
      { endpoint: 'https://localhost/wp/x', keys: { p256dh: validKey(), auth } },
      { endpoint: 'https://u:p@fcm.example.net/wp/x', keys: { p256dh: validKey(), auth } },
      { endpoint: 'not a url', keys: { p256dh: validKey(), auth } },
      { endpoint: 'https://fcm.example.net/wp/x', keys: { p256dh: Buffer.alloc(65, 4).toString('base64url'), auth } }, // not on the curve
      { endpoint: 'https://fcm.example.net/wp/x', keys: { p256dh: validKey().slice(0, 40), auth } },
      { endpoint: 'https://fcm.example.net/wp/x', keys: { p256dh: validKey(), auth: Buffer.alloc(15).toString('base64url') } },
      { endpoint: 'https://fcm.example.net/wp/x', keys: { p256dh: 'not base64!', auth } },
      { endpoint: 'https://fcm.example.net/wp/x', keys: { p256dh: validKey(), auth }, expiration_time: 1000 },
      { endpoint: 'https://fcm.example.net/wp/x', keys: { p256dh: validKey(), auth }, other: 1 },
      { endpoint: 'https://fcm.example.net/wp/x' },
    ];
    for (const body of bad) {
      const r = await s.request('POST', '/v1/me/push-subscriptions', { token: ws.ownerToken, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_request');
    }
    assert.equal((await s.request('POST', '/v1/me/push-subscriptions', { token: ws.apiKey, body: sub('key') })).status, 403, 'a person’s, not a key’s');
    const count = (await s.app.db.selectFrom('push_subscriptions').select('id').where('person_id', '=', ws.ownerId).execute()).length;
    assert.equal(count, 2, 'refusals stored nothing');

    // Someone else cannot remove it; the owner can.
    const other = await addPerson(s.app, ws.workspaceId, 'agent');
    assert.equal((await s.request('DELETE', `/v1/me/push-subscriptions/${first.body.id}`, { token: other.token })).status, 404);
    assert.equal((await s.request('DELETE', `/v1/me/push-subscriptions/${first.body.id}`, { token: ws.ownerToken })).status, 204);
    assert.equal((await s.request('DELETE', `/v1/me/push-subscriptions/${first.body.id}`, { token: ws.ownerToken })).status, 404);

    for (let i = 0; i < PUSH_SUBSCRIPTIONS_PER_PERSON; i++)
      await s.request('POST', '/v1/me/push-subscriptions', { token: other.token, body: sub(`many-${i}`) });
    const over = await s.request('POST', '/v1/me/push-subscriptions', { token: other.token, body: sub('one-too-many') });
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, 'too_many_push_subscriptions');
  });

  test('push is refused when the server has no VAPID keys', async () => {
    const t = await startTestServer();
    try {
      const ws = await seedWorkspace(t.app);
      const r = await t.request('POST', '/v1/me/push-subscriptions', { token: ws.ownerToken, body: sub('off') });
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'push_not_configured');
      assert.deepEqual((await t.request('GET', '/v1/push/key', { token: ws.ownerToken })).body, { enabled: false, vapid_public_key: null });
    } finally {
      await t.stop();
    }
  });

  test('DELETE /v1/me: own address only, refused while the only owner (naming the workspace), then everything of the account goes', async () => {
    const ws = await seedWorkspace(s.app, { name: 'Solo Owner Ltd' });
    const owner = await s.app.db.selectFrom('people').selectAll().where('id', '=', ws.ownerId).executeTakeFirstOrThrow();
    const address = (await seedEmailChannel(s.app, ws)).address!;
    const { conversation_id } = await deliverMail(s, address);
    const reply = await s.request('POST', `/v1/conversations/${conversation_id}/messages`, { token: ws.ownerToken, body: { kind: 'note', body: 'my note' } });
    assert.equal(reply.status, 201);
    assert.equal((await s.request('PATCH', `/v1/conversations/${conversation_id}`, { token: ws.ownerToken, body: { assignee_id: ws.ownerId } })).status, 200);
    await s.request('POST', '/v1/me/push-subscriptions', { token: ws.ownerToken, body: sub('owner') });
    await s.app.db
      .insertInto('passkeys')
      .values({
        id: 'pk_test',
        person_id: ws.ownerId,
        credential_id: 'Y3JlZA',
        public_key: 'cHVi',
        transports: '["internal"]',
        aaguid: null,
        backup_eligible: 1,
        backed_up: 1,
        name: 'Laptop',
        created_at: new Date().toISOString(),
        last_used_at: null,
      })
      .execute();

    assert.equal((await s.request('DELETE', '/v1/me', { token: ws.ownerToken, body: { email: 'someone-else@example.com' } })).status, 400);
    assert.equal((await s.request('DELETE', '/v1/me', { token: ws.ownerToken, body: {} })).status, 400);
    assert.equal((await s.request('DELETE', '/v1/me', { token: ws.apiKey, body: { email: owner.email } })).status, 403);
    const refused = await s.request('DELETE', '/v1/me', { token: ws.ownerToken, body: { email: owner.email.toUpperCase() } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'only_owner');
    assert.match(refused.body.error.message, /Solo Owner Ltd/);
    assert.deepEqual(refused.body.error.workspaces, [{ id: ws.workspaceId, name: 'Solo Owner Ltd' }]);
    assert.equal((await s.request('GET', '/v1/me', { token: ws.ownerToken })).status, 200, 'nothing changed');

    // With a second owner the account can go.
    const second = await addPerson(s.app, ws.workspaceId, 'owner');
    const ok = await s.request('DELETE', '/v1/me', { token: ws.ownerToken, body: { email: owner.email } });
    assert.equal(ok.status, 200);
    assert.deepEqual(
      { ...ok.body, person_id: undefined },
      { deleted: true, person_id: undefined, memberships: 1, sessions: 1, passkeys: 1, push_subscriptions: 1 },
    );
    assert.equal((await s.request('GET', '/v1/me', { token: ws.ownerToken })).status, 401, 'sessions are gone');
    for (const table of ['memberships', 'sessions', 'passkeys', 'push_subscriptions'] as const) {
      assert.equal((await s.app.db.selectFrom(table).select('person_id').where('person_id', '=', ws.ownerId).execute()).length, 0, table);
    }
    assert.equal(await s.app.db.selectFrom('people').select('id').where('id', '=', ws.ownerId).executeTakeFirst(), undefined);
    // The note stays, without an author; the conversation is unassigned.
    const messages = await s.request('GET', `/v1/conversations/${conversation_id}/messages`, { token: second.token });
    const note = messages.body.data.find((m: { id: string }) => m.id === reply.body.id);
    assert.equal(note.body, 'my note');
    assert.deepEqual(note.author, { type: 'member', member_id: null });
    const conversation = await s.request('GET', `/v1/conversations/${conversation_id}`, { token: second.token });
    assert.equal(conversation.body.assignee_id, null);
  });

  test('a person without a workspace can still sign in and delete the account', async () => {
    const person = await findOrCreatePerson(s.app, { email: 'loner@example.com' });
    const { token } = await createSession(s.app, person.id);
    assert.equal((await s.request('GET', '/v1/me', { token })).status, 200);
    assert.equal((await s.request('DELETE', '/v1/me', { token, body: { email: 'loner@example.com' } })).status, 200);
  });

  test('svc person delete: refused while the only owner, says what it would do without --yes, deletes with --yes', async () => {
    const ws = await seedWorkspace(s.app, { name: 'Cmd Owner Co' });
    const owner = await s.app.db.selectFrom('people').selectAll().where('id', '=', ws.ownerId).executeTakeFirstOrThrow();
    const refused = await runSvc(['person', 'delete', '--email', owner.email, '--yes'], { env: s.env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /only owner of workspace "Cmd Owner Co"/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    const dry = await runSvc(['person', 'delete', '--email', owner.email], { env: s.env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, /would delete the account .*1 membership/);
    const other = await findOrCreatePerson(s.app, { email: 'co-owner@example.com' });
    await addMember(s.app, ws.workspaceId, other.id, 'owner');
    const done = await runSvc(['person', 'delete', '--email', owner.email, '--yes'], { env: s.env });
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stderr, /deleted the account/);
    assert.equal((await s.request('GET', '/v1/me', { token: ws.ownerToken })).status, 401);
    const unknown = await runSvc(['person', 'delete', '--email', owner.email, '--yes'], { env: s.env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not found/);
  });
});
