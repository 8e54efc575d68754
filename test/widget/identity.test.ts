// Issue 32, items 1–3: an address nobody proved never selects, joins or takes over a contact, and a
// stranger who knows a Message-ID never changes where replies go.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createChatChannel } from '../../src/channels/service.js';
import { identityHash } from '../../src/widget/service.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const ORIGIN = 'https://shop.example.com';
const SECRET = 'identity-ingress-secret';

describe('widget identities and unproven addresses', () => {
  let s: TestServer;
  let seed: Seed;
  let sink: SmtpSink;
  let address: string;
  let publicKey: string;
  let anonKey: string;
  let identitySecret: string;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    await s.app.jobs.stop(); // sends run when the test drains them
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    publicKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN] })).public_key!;
    anonKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Anon', origins: [ORIGIN], allowAnonymous: true }))
      .public_key!;
    const rotated = await s.request('POST', `/v1/inboxes/${seed.inboxId}/identity-secret`, { token: seed.ownerToken });
    identitySecret = rotated.body.identity_secret as string;
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  const visitor = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) =>
    s.request(method, path, { token: opts.token, body: opts.body, headers: { origin: ORIGIN } });

  async function session(body: Record<string, unknown>) {
    const r = await visitor('POST', '/v1/widget/sessions', { body });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { token: string; contact_id: string; verified: boolean };
  }

  /** A customer who wrote by e-mail, with an attachment: the contact an attacker would want. */
  async function customerByMail(email: string, messageId: string, name = 'Alice Customer') {
    const boundary = 'b0undary';
    const raw = rawMail(
      {
        From: `${name} <${email}>`,
        To: address,
        Subject: 'My invoice',
        'Message-ID': `<${messageId}>`,
        'MIME-Version': '1.0',
        'Content-Type': `multipart/mixed; boundary="${boundary}"`,
      },
      `--${boundary}\r\nContent-Type: text/plain\r\n\r\nMy account number is 12345.\r\n--${boundary}\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="invoice.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n--${boundary}--\r\n`,
    );
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw, token: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const stored = r.body.data[0] as { conversation_id: string; message_id: string };
    const conv = await s.request('GET', `/v1/conversations/${stored.conversation_id}`, { token: seed.apiKey });
    return { ...stored, contactId: conv.body.contact_id as string };
  }

  async function contact(id: string) {
    const r = await s.request('GET', `/v1/contacts/${id}`, { token: seed.apiKey });
    assert.equal(r.status, 200);
    return r.body as {
      id: string;
      name: string | null;
      emails: string[];
      external_ids: unknown[];
      unverified_email: string | null;
      merged_into_id: string | null;
    };
  }

  test('an identified visitor who names a customer’s address does not get that customer (identity hash over the external id only)', async () => {
    const alice = await customerByMail('alice@cust.example', 'id1-a@cust.example');
    const attacker = await session({
      public_key: publicKey,
      external_id: 'attacker-1',
      identity_hash: identityHash(identitySecret, 'attacker-1'),
      email: 'alice@cust.example',
    });
    assert.equal(attacker.verified, true);
    assert.notEqual(attacker.contact_id, alice.contactId);
    assert.deepEqual((await visitor('GET', '/v1/widget/conversations', { token: attacker.token })).body.data, []);
    const peek = await visitor('GET', `/v1/widget/conversations/${alice.conversation_id}/messages`, { token: attacker.token });
    assert.equal(peek.status, 404);
    const messages = await s.request('GET', `/v1/conversations/${alice.conversation_id}/messages`, { token: seed.apiKey });
    const file = messages.body.data.flatMap((m: { attachments: { id: string }[] }) => m.attachments)[0];
    assert.ok(file, 'the customer’s mail has an attachment');
    assert.equal((await visitor('GET', `/v1/widget/attachments/${file.id}/content`, { token: attacker.token })).status, 404);

    // The link is not made at all: the customer's contact is unchanged, the claim sits apart.
    const owner = await contact(alice.contactId);
    assert.deepEqual(owner.external_ids, []);
    const claim = await contact(attacker.contact_id);
    assert.deepEqual(claim.emails, []);
    assert.equal(claim.unverified_email, 'alice@cust.example');
    // Coming back with the same identity still finds the attacker's own contact, never Alice's.
    const again = await session({
      public_key: publicKey,
      external_id: 'attacker-1',
      identity_hash: identityHash(identitySecret, 'attacker-1'),
      email: 'alice@cust.example',
    });
    assert.equal(again.contact_id, attacker.contact_id);
    assert.deepEqual((await visitor('GET', '/v1/widget/conversations', { token: again.token })).body.data, []);
  });

  test('an identity hash that covers the address (external_id + "\\n" + email) joins the customer who owns it', async () => {
    const bob = await customerByMail('bob@cust.example', 'id2-a@cust.example');
    const wrongAddress = await visitor('POST', '/v1/widget/sessions', {
      body: {
        public_key: publicKey,
        external_id: 'bob-7',
        identity_hash: identityHash(identitySecret, 'bob-7', 'mallory@cust.example'),
        email: 'bob@cust.example',
      },
    });
    assert.equal(wrongAddress.status, 401, 'a hash over another address proves nothing');
    const proven = await session({
      public_key: publicKey,
      external_id: 'bob-7',
      identity_hash: identityHash(identitySecret, 'bob-7', 'bob@cust.example'),
      email: 'bob@cust.example',
    });
    assert.equal(proven.verified, true);
    assert.equal(proven.contact_id, bob.contactId);
    const seen = await visitor('GET', '/v1/widget/conversations', { token: proven.token });
    assert.deepEqual(
      seen.body.data.map((c: { id: string }) => c.id),
      [bob.conversation_id],
    );
    assert.deepEqual((await contact(bob.contactId)).external_ids, [{ inbox_id: seed.inboxId, external_id: 'bob-7' }]);
  });

  test('an anonymous visitor who types a customer’s address gets a contact of its own, marked unverified', async () => {
    const carol = await customerByMail('carol@cust.example', 'id3-a@cust.example', 'Carol Customer');
    await s.request('PATCH', `/v1/contacts/${carol.contactId}`, { token: seed.apiKey, body: { attributes: { plan: 'enterprise' } } });
    const claim = await session({ public_key: anonKey, email: 'Carol@Cust.example', name: 'Not Carol' });
    assert.equal(claim.verified, false);
    assert.notEqual(claim.contact_id, carol.contactId);
    const started = await visitor('POST', '/v1/widget/conversations', { token: claim.token, body: { body: 'please change my bank details' } });
    assert.equal(started.status, 201);
    const claimed = await contact(claim.contact_id);
    assert.equal(claimed.unverified_email, 'carol@cust.example');
    assert.deepEqual(claimed.emails, []);
    assert.equal(claimed.name, 'Not Carol');
    const owner = (await s.request('GET', `/v1/contacts/${carol.contactId}`, { token: seed.apiKey })).body;
    assert.equal(owner.name, 'Carol Customer', 'the claim’s name never reaches the owner');
    assert.deepEqual(owner.attributes, { plan: 'enterprise' });
    // The team sees the chat under the claim, never under Carol with her attributes and history.
    const conv = await s.request('GET', `/v1/conversations/${started.body.conversation.id}`, { token: seed.apiKey });
    assert.equal(conv.body.contact_id, claim.contact_id);
    // Confirming an address another contact owns is refused; the merge after checking works.
    const taken = await s.request('PATCH', `/v1/contacts/${claim.contact_id}`, { token: seed.apiKey, body: { emails: ['carol@cust.example'] } });
    assert.equal(taken.status, 409);
    const merged = await s.request('POST', `/v1/contacts/${claim.contact_id}/merge`, { token: seed.apiKey, body: { into_contact_id: carol.contactId } });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    const after = await s.request('GET', `/v1/conversations/${started.body.conversation.id}`, { token: seed.apiKey });
    assert.equal(after.body.contact_id, carol.contactId);
  });

  test('an unverified address nobody owns can be confirmed by the team, which clears the mark', async () => {
    const claim = await session({ public_key: anonKey, email: 'dave@cust.example' });
    assert.equal((await contact(claim.contact_id)).unverified_email, 'dave@cust.example');
    const confirmed = await s.request('PATCH', `/v1/contacts/${claim.contact_id}`, { token: seed.apiKey, body: { emails: ['dave@cust.example'] } });
    assert.equal(confirmed.status, 200);
    assert.deepEqual(confirmed.body.emails, ['dave@cust.example']);
    assert.equal(confirmed.body.unverified_email, null);
  });

  test('a stranger who knows a Message-ID joins the thread as themself and does not get the next reply', async () => {
    const erin = await customerByMail('erin@cust.example', 'id5-a@cust.example', 'Erin Customer');
    const joined = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({
        From: 'Erin Customer <mallory@evil.example>',
        To: address,
        Subject: 'Re: My invoice',
        'Message-ID': '<id5-b@evil.example>',
        'In-Reply-To': '<id5-a@cust.example>',
        References: '<id5-a@cust.example>',
      }),
      token: SECRET,
    });
    assert.equal(joined.status, 201);
    assert.equal(joined.body.data[0].conversation_id, erin.conversation_id);
    const messages = await s.request('GET', `/v1/conversations/${erin.conversation_id}/messages`, { token: seed.apiKey });
    const strangers = messages.body.data.find((m: { id: string }) => m.id === joined.body.data[0].message_id);
    assert.equal(strangers.email.from.address, 'mallory@evil.example');
    assert.notEqual(strangers.author.contact_id, erin.contactId, 'stored with its real author');

    const reply = await s.request('POST', `/v1/conversations/${erin.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { body: 'Your invoice is attached.' },
    });
    assert.equal(reply.status, 201);
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const mail = (await sink.waitFor(count + 1))[count];
    assert.deepEqual(mail.to, ['erin@cust.example']);
    assert.ok(!mail.raw.toString().includes('mallory@evil.example'), 'the stranger is named nowhere in the reply');
  });
});
