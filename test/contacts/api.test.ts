import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/api-keys/service.js';
import { loadContactView, loadContactViewByEmail } from '../../src/contacts/store.js';
import { createInbox } from '../../src/inboxes/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, eventsAfter, INGRESS_SECRET, lastEventSeq, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('contacts API', () => {
  let s: TestServer;
  let seed: Seed;
  let inboxB: string;
  let address: string;
  let addressB: string;

  before(async () => {
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    inboxB = (await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Billing' })).id;
    address = (await seedEmailChannel(s.app, seed)).address!;
    addressB = (await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: inboxB })).address!;
  });
  after(() => s.stop());

  test('create, read, list and update; contact.updated carries the contact and no inbox', async () => {
    const created = await s.request('POST', '/v1/contacts', {
      token: seed.apiKey,
      body: {
        name: 'Grace Hopper',
        emails: ['Grace@Navy.example', 'grace@navy.example'],
        external_ids: [{ inbox_id: seed.inboxId, external_id: 'u-1' }],
        attributes: { plan: 'pro', seats: 5 },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.emails, ['grace@navy.example']);
    assert.deepEqual(created.body.external_ids, [{ inbox_id: seed.inboxId, external_id: 'u-1' }]);
    assert.equal(created.body.merged_into_id, null);
    const id = created.body.id;

    const taken = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { emails: ['GRACE@navy.example'] } });
    assert.equal(taken.status, 409);
    const takenX = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { external_ids: [{ inbox_id: seed.inboxId, external_id: 'u-1' }] } });
    assert.equal(takenX.status, 409);
    const badInbox = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { external_ids: [{ inbox_id: 'inb_nope', external_id: 'u-2' }] } });
    assert.equal(badInbox.status, 404);
    const badEmail = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { emails: ['not an address'] } });
    assert.equal(badEmail.status, 400);

    assert.equal((await s.request('GET', `/v1/contacts/${id}`, { token: seed.apiKey })).body.name, 'Grace Hopper');
    const byEmail = await s.request('GET', '/v1/contacts?email=GRACE%40navy.example', { token: seed.apiKey });
    assert.deepEqual(
      byEmail.body.data.map((c: { id: string }) => c.id),
      [id],
    );
    const byExternal = await s.request('GET', `/v1/contacts?inbox_id=${seed.inboxId}&external_id=u-1`, { token: seed.apiKey });
    assert.deepEqual(
      byExternal.body.data.map((c: { id: string }) => c.id),
      [id],
    );
    const byQuery = await s.request('GET', '/v1/contacts?q=hopp', { token: seed.apiKey });
    assert.deepEqual(
      byQuery.body.data.map((c: { id: string }) => c.id),
      [id],
    );

    const seq = await lastEventSeq(s);
    const patched = await s.request('PATCH', `/v1/contacts/${id}`, {
      token: seed.apiKey,
      body: { attributes: { seats: null, region: 'eu' }, emails: ['grace@navy.example', 'g@cobol.example'] },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.attributes, { plan: 'pro', region: 'eu' });
    assert.deepEqual(patched.body.emails, ['grace@navy.example', 'g@cobol.example']);
    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => e.type),
      ['contact.updated'],
    );
    assert.equal(events[0].contact_id, id);
    assert.equal(events[0].inbox_id, null);
    assert.deepEqual(events[0].data.contact.attributes, { plan: 'pro', region: 'eu' });
    const unchanged = await s.request('PATCH', `/v1/contacts/${id}`, { token: seed.apiKey, body: { name: 'Grace Hopper' } });
    assert.equal(unchanged.status, 200);
    assert.deepEqual(await eventsAfter(s, seq + 1), []);

    // Mail from one of its addresses lands with this contact (found within the workspace only).
    const mail = await deliverMail(s, address, { From: 'Someone Else <G@Cobol.example>' });
    const conv = await s.request('GET', `/v1/conversations/${mail.conversation_id}`, { token: seed.apiKey });
    assert.equal(conv.body.contact_id, id);
    const elsewhere = await seedWorkspace(s.app);
    const otherAddress = (await seedEmailChannel(s.app, elsewhere)).address!;
    const foreign = await deliverMail(s, otherAddress, { From: 'g@cobol.example' });
    const foreignConv = await s.app.db.selectFrom('conversations').select('contact_id').where('id', '=', foreign.conversation_id).executeTakeFirstOrThrow();
    assert.notEqual(foreignConv.contact_id, id);
  });

  test("a sender's contact read by address (one statement) is the same view as read by id: addresses and external ids in order", async () => {
    const created = await s.request('POST', '/v1/contacts', {
      token: seed.apiKey,
      body: {
        name: 'Ada',
        emails: ['ada@engine.example', 'countess@engine.example', 'ada.l@engine.example'],
        external_ids: [
          { inbox_id: inboxB, external_id: 'ada-b' },
          { inbox_id: seed.inboxId, external_id: 'ada-a' },
        ],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const byId = await loadContactView(s.app.db, seed.workspaceId, created.body.id);
    assert.deepEqual(byId?.emails, ['ada@engine.example', 'countess@engine.example', 'ada.l@engine.example']);
    assert.equal(byId?.externalIds.length, 2);
    for (const email of byId!.emails) assert.deepEqual(await loadContactViewByEmail(s.app.db, seed.workspaceId, email), byId, email);
    const bare = await s.request('POST', '/v1/contacts', { token: seed.apiKey, body: { emails: ['plain@engine.example'] } });
    assert.equal(bare.status, 201, JSON.stringify(bare.body));
    assert.deepEqual(
      await loadContactViewByEmail(s.app.db, seed.workspaceId, 'plain@engine.example'),
      await loadContactView(s.app.db, seed.workspaceId, bare.body.id),
    );
    assert.equal(await loadContactViewByEmail(s.app.db, seed.workspaceId, 'nobody@engine.example'), undefined);
    assert.equal(await loadContactViewByEmail(s.app.db, 'ws_other', 'ada@engine.example'), undefined, 'another workspace');
    // A mail from the second address is the same contact, and its event carries the whole view.
    const before = await lastEventSeq(s);
    const stored = await deliverMail(s, address, { From: 'Ada <countess@engine.example>' });
    const conversation = await s.app.db.selectFrom('conversations').select('contact_id').where('id', '=', stored.conversation_id).executeTakeFirstOrThrow();
    assert.equal(conversation.contact_id, created.body.id);
    const event = (await eventsAfter(s, before)).find((e) => e.type === 'conversation.created');
    assert.deepEqual(event?.data.contact?.emails, byId!.emails, JSON.stringify(event?.data));
    assert.deepEqual(event?.data.contact?.external_ids, byId!.externalIds);
  });

  test('merge: the target gets addresses, external ids and conversations; the source shows merged_into_id', async () => {
    const source = await deliverMail(s, address, { From: 'Dup One <dup1@cust.example>' });
    const sourceId = (await s.request('GET', `/v1/conversations/${source.conversation_id}`, { token: seed.apiKey })).body.contact_id;
    await s.request('PATCH', `/v1/contacts/${sourceId}`, {
      token: seed.apiKey,
      body: { external_ids: [{ inbox_id: inboxB, external_id: 'dup-x' }], attributes: { from: 'source', only_source: true } },
    });
    const target = await s.request('POST', '/v1/contacts', {
      token: seed.apiKey,
      body: { name: 'Dup Two', emails: ['dup2@cust.example'], attributes: { from: 'target' } },
    });
    const seq = await lastEventSeq(s);
    const merged = await s.request('POST', `/v1/contacts/${sourceId}/merge`, { token: seed.apiKey, body: { into_contact_id: target.body.id } });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    assert.deepEqual(merged.body.emails, ['dup2@cust.example', 'dup1@cust.example']);
    assert.deepEqual(merged.body.external_ids, [{ inbox_id: inboxB, external_id: 'dup-x' }]);
    assert.deepEqual(merged.body.attributes, { from: 'target', only_source: true });
    assert.equal(merged.body.name, 'Dup Two');

    const events = await eventsAfter(s, seq);
    assert.deepEqual(
      events.map((e) => e.type),
      ['conversation.updated', 'contact.deleted', 'contact.updated'],
    );
    assert.equal(events[0].data.conversation.contact_id, target.body.id);
    assert.equal(events[1].contact_id, sourceId);
    assert.equal(events[1].data.contact.merged_into_id, target.body.id);
    assert.deepEqual(events[1].data.contact.external_ids, [{ inbox_id: inboxB, external_id: 'dup-x' }]);
    assert.equal(events[2].contact_id, target.body.id);

    const old = await s.request('GET', `/v1/contacts/${sourceId}`, { token: seed.apiKey });
    assert.equal(old.body.merged_into_id, target.body.id);
    assert.deepEqual(old.body.emails, []);
    const list = await s.request('GET', '/v1/contacts?limit=200', { token: seed.apiKey });
    assert.ok(!list.body.data.some((c: { id: string }) => c.id === sourceId));
    // New mail from the old address goes to the target.
    const later = await deliverMail(s, address, { From: 'dup1@cust.example' });
    assert.equal((await s.request('GET', `/v1/conversations/${later.conversation_id}`, { token: seed.apiKey })).body.contact_id, target.body.id);
    const again = await s.request('POST', `/v1/contacts/${sourceId}/merge`, { token: seed.apiKey, body: { into_contact_id: target.body.id } });
    assert.equal(again.status, 409);
    const self = await s.request('POST', `/v1/contacts/${target.body.id}/merge`, { token: seed.apiKey, body: { into_contact_id: target.body.id } });
    assert.equal(self.status, 400);
  });

  test('delete removes the contact’s conversations, messages and stored files; contact.deleted has its external ids', async () => {
    const mail = await deliverMail(
      s,
      address,
      { From: 'leaving@cust.example', 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="X"' },
      '--X\r\nContent-Type: text/plain\r\n\r\nbye\r\n--X\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="a.pdf"\r\n\r\n%PDF\r\n--X--\r\n',
    );
    const contactId = (await s.request('GET', `/v1/conversations/${mail.conversation_id}`, { token: seed.apiKey })).body.contact_id;
    await s.request('PATCH', `/v1/contacts/${contactId}`, {
      token: seed.apiKey,
      body: { external_ids: [{ inbox_id: seed.inboxId, external_id: 'leaving-1' }] },
    });
    const keys = [
      ...(await s.app.db.selectFrom('attachments').select('storage_key').where('conversation_id', '=', mail.conversation_id).execute()),
      ...(await s.app.db.selectFrom('messages').select('raw_storage_key as storage_key').where('conversation_id', '=', mail.conversation_id).execute()),
    ].map((r) => r.storage_key!);
    assert.equal(keys.length, 2);
    for (const k of keys) assert.ok(await s.app.storage.exists(k));

    const seq = await lastEventSeq(s);
    const r = await s.request('DELETE', `/v1/contacts/${contactId}`, { token: seed.apiKey });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { id: contactId, deleted: true, conversations_deleted: 1 });
    const [event] = await eventsAfter(s, seq);
    assert.equal(event.type, 'contact.deleted');
    assert.equal(event.contact_id, contactId);
    assert.deepEqual(event.data.contact.external_ids, [{ inbox_id: seed.inboxId, external_id: 'leaving-1' }]);
    assert.equal(event.data.contact.merged_into_id, null);

    assert.equal((await s.request('GET', `/v1/contacts/${contactId}`, { token: seed.apiKey })).status, 404);
    assert.equal((await s.request('GET', `/v1/conversations/${mail.conversation_id}`, { token: seed.apiKey })).status, 404);
    assert.equal((await s.app.db.selectFrom('messages').select('id').where('conversation_id', '=', mail.conversation_id).execute()).length, 0);
    // The files go with the stored deletion job.
    await s.app.jobs.drain();
    for (const k of keys) assert.equal(await s.app.storage.exists(k), false);
  });

  test('DELETE /v1/contacts/by-external-id?inbox_id=…&external_id=…', async () => {
    const c = await s.request('POST', '/v1/contacts', {
      token: seed.apiKey,
      body: { name: 'Backend user', external_ids: [{ inbox_id: seed.inboxId, external_id: 'backend-42' }] },
    });
    const missing = await s.request('DELETE', `/v1/contacts/by-external-id?inbox_id=${seed.inboxId}&external_id=nope`, { token: seed.apiKey });
    assert.equal(missing.status, 404);
    const noParams = await s.request('DELETE', '/v1/contacts/by-external-id', { token: seed.apiKey });
    assert.equal(noParams.status, 400);
    const r = await s.request('DELETE', `/v1/contacts/by-external-id?inbox_id=${seed.inboxId}&external_id=backend-42`, { token: seed.apiKey });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, c.body.id);
    assert.equal((await s.request('GET', `/v1/contacts/${c.body.id}`, { token: seed.apiKey })).status, 404);
  });

  test('scopes and inbox limits: limited keys reach contacts of their inboxes, and delete only contacts wholly inside them', async () => {
    const onlyA = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'A', inboxIds: [seed.inboxId] })).secret;
    const readOnly = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'ro', scopes: ['contacts:read'] })).secret;
    const inB = await deliverMail(s, addressB, { From: 'only-b@cust.example' });
    const bContact = (await s.request('GET', `/v1/conversations/${inB.conversation_id}`, { token: seed.apiKey })).body.contact_id;
    assert.equal((await s.request('GET', `/v1/contacts/${bContact}`, { token: onlyA })).status, 404);
    const listA = await s.request('GET', '/v1/contacts?limit=200', { token: onlyA });
    assert.ok(!listA.body.data.some((c: { id: string }) => c.id === bContact));

    const both = await deliverMail(s, address, { From: 'both@cust.example' });
    await deliverMail(s, addressB, { From: 'both@cust.example' });
    const bothId = (await s.request('GET', `/v1/conversations/${both.conversation_id}`, { token: seed.apiKey })).body.contact_id;
    assert.equal((await s.request('GET', `/v1/contacts/${bothId}`, { token: onlyA })).status, 200);
    const refused = await s.request('DELETE', `/v1/contacts/${bothId}`, { token: onlyA });
    assert.equal(refused.status, 403);
    assert.equal((await s.request('GET', `/v1/contacts/${bothId}`, { token: seed.apiKey })).status, 200);

    assert.equal((await s.request('DELETE', `/v1/contacts/${bothId}`, { token: readOnly })).status, 403);
    assert.equal((await s.request('POST', '/v1/contacts', { token: readOnly, body: { name: 'x' } })).status, 403);
    assert.equal((await s.request('GET', '/v1/contacts', { token: readOnly })).status, 200);
  });
});
