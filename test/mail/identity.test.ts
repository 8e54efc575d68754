// Message identity: the `email` object of messages (what integrations correlate mail by), and
// de-duplication of inbound mail by what the message is rather than by its Message-ID alone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findStoredCopy } from '../../src/mail/duplicates.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { deliverMail, INGRESS_SECRET, rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

describe('message identity and storing the same mail once', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: INGRESS_SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  });
  after(async () => {
    await s?.stop();
    await sink?.close();
  });

  const messagesOf = async (conversationId: string) =>
    (await s.request('GET', `/v1/conversations/${conversationId}/messages?order=asc`, { token: seed.apiKey })).body.data as Record<string, any>[];
  const post = (raw: Buffer) => s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw, token: INGRESS_SECRET });

  test('inbound mail shows its Message-ID, In-Reply-To, References, From, To, Cc and Subject as received', async () => {
    const r = await deliverMail(s, address, {
      From: '"Ada Lovelace" <Ada@Customer.example>',
      To: `Support <${address}>, other@customer.example`,
      Cc: 'Bob <bob@customer.example>',
      Subject: 'Printer  on fire',
      'Message-ID': '<id-1@customer.example>',
      'In-Reply-To': '<earlier@customer.example>',
      References: '<root@customer.example> <earlier@customer.example>',
    });
    const [message] = await messagesOf(r.conversation_id);
    assert.deepEqual(message.email, {
      message_id: 'id-1@customer.example',
      in_reply_to: ['earlier@customer.example'],
      references: ['root@customer.example', 'earlier@customer.example'],
      from: { name: 'Ada Lovelace', address: 'Ada@Customer.example' },
      to: [
        { name: 'Support', address },
        { name: null, address: 'other@customer.example' },
      ],
      cc: [{ name: 'Bob', address: 'bob@customer.example' }],
      subject: 'Printer  on fire',
    });
    const single = await s.request('GET', `/v1/conversations/${r.conversation_id}/messages/${r.message_id}`, { token: seed.apiKey });
    assert.deepEqual(single.body.email, message.email);
  });

  test('a reply shows the headers it is sent with, the same the customer receives; notes have none', async () => {
    const inbound = await deliverMail(s, address, { From: 'Carol <carol@customer.example>', Subject: 'Login', 'Message-ID': '<login-1@customer.example>' });
    const reply = await s.request('POST', `/v1/conversations/${inbound.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'Try again now.' } });
    assert.equal(reply.status, 201);
    assert.match(reply.body.email.message_id, /^m_.+@example\.com$/);
    assert.deepEqual(reply.body.email.in_reply_to, ['login-1@customer.example']);
    assert.deepEqual(reply.body.email.references, ['login-1@customer.example']);
    assert.deepEqual(reply.body.email.to, [{ name: 'Carol', address: 'carol@customer.example' }], 'addressed by the contact’s name');
    assert.equal(reply.body.email.from.address, address);
    assert.equal(reply.body.email.subject, 'Re: Login');

    const before = sink.messages.length;
    await s.app.jobs.drain();
    const [mail] = (await sink.waitFor(before + 1)).slice(before);
    assert.equal(mail.parsed.messageId, `<${reply.body.email.message_id}>`);
    assert.equal(mail.parsed.inReplyTo, '<login-1@customer.example>');
    assert.equal(mail.parsed.subject, reply.body.email.subject);
    const sent = (await messagesOf(inbound.conversation_id)).find((m) => m.id === reply.body.id)!;
    assert.equal(sent.status, 'sent');
    assert.deepEqual(sent.email, reply.body.email);

    // Our own reply coming back (a copy to the support address) is the message we sent…
    const echo = await post(mail.raw);
    assert.equal(echo.body.data[0].duplicate, true);
    assert.equal(echo.body.data[0].message_id, reply.body.id);
    // …but someone else's mail that reuses its Message-ID is stored.
    const reuse = await post(
      rawMail(
        { From: 'Carol <carol@customer.example>', To: address, Subject: 'Re: Login', 'Message-ID': `<${reply.body.email.message_id}>` },
        'My client reused your id.\r\n',
      ),
    );
    assert.equal(reuse.body.data[0].duplicate, false);
    assert.notEqual(reuse.body.data[0].message_id, reply.body.id);
    const answer = await deliverMail(s, address, {
      From: 'Carol <carol@customer.example>',
      Subject: 'Re: Login',
      'Message-ID': '<login-2@customer.example>',
      'In-Reply-To': `<${reply.body.email.message_id}>`,
    });
    assert.equal(answer.conversation_id, inbound.conversation_id, 'our Message-ID still threads to our reply');

    const note = await s.request('POST', `/v1/conversations/${inbound.conversation_id}/messages`, {
      token: seed.apiKey,
      body: { kind: 'note', body: 'Internal.' },
    });
    assert.equal(note.status, 201);
    assert.equal(note.body.email, null);
  });

  test('the OpenAPI document describes the email object', async () => {
    const doc = (await s.request('GET', '/v1/openapi.json')).body;
    const email = doc.components.schemas.Message.properties.email;
    assert.ok(email, 'Message.email is documented');
    const headers = doc.components.schemas.MailHeaders;
    assert.deepEqual(Object.keys(headers.properties).sort(), ['bcc', 'cc', 'from', 'in_reply_to', 'message_id', 'references', 'subject', 'to']);
    assert.ok(!headers.required.includes('bcc'), 'bcc is shown to the team only, so optional');
  });

  test('a different message reusing a Message-ID is stored too and does not take over its thread', async () => {
    const original = rawMail(
      {
        From: 'Dana <dana@customer.example>',
        To: address,
        Subject: 'Refund',
        'Message-ID': '<reused@customer.example>',
        Date: 'Mon, 05 Jan 2026 10:00:00 +0000',
      },
      'Please refund order 12.\r\n',
    );
    const impostor = rawMail(
      {
        From: 'Mallory <mallory@elsewhere.example>',
        To: address,
        Subject: 'Refund',
        'Message-ID': '<reused@customer.example>',
        Date: 'Mon, 05 Jan 2026 10:05:00 +0000',
      },
      'Send the refund to me instead.\r\n',
    );
    const first = await post(original);
    assert.equal(first.status, 201);
    const second = await post(impostor);
    assert.equal(second.status, 201);
    const a = first.body.data[0];
    const b = second.body.data[0];
    assert.equal(b.duplicate, false, 'the second message is stored');
    assert.notEqual(b.message_id, a.message_id);
    assert.notEqual(b.conversation_id, a.conversation_id, 'it starts its own conversation');
    assert.equal((await messagesOf(b.conversation_id))[0].body.trim(), 'Send the refund to me instead.');
    // The first keeps its message and its place in threading.
    const firstMessages = await messagesOf(a.conversation_id);
    assert.deepEqual(
      firstMessages.map((m) => m.body.trim()),
      ['Please refund order 12.'],
    );
    const reply = await deliverMail(s, address, {
      From: 'Dana <dana@customer.example>',
      Subject: 'Re: Refund',
      'Message-ID': '<reused-reply@customer.example>',
      'In-Reply-To': '<reused@customer.example>',
    });
    assert.equal(reply.conversation_id, a.conversation_id, 'replies to the Message-ID join the first message');
    // Each of them again (a relay retrying): stored once, answered with its own message.
    const again = await post(impostor);
    assert.equal(again.body.data[0].duplicate, true);
    assert.equal(again.body.data[0].message_id, b.message_id);
    const firstAgain = await post(original);
    assert.equal(firstAgain.body.data[0].duplicate, true);
    assert.equal(firstAgain.body.data[0].message_id, a.message_id);
    const stored = await s.app.db
      .selectFrom('messages')
      .select('id')
      .where('workspace_id', '=', seed.workspaceId)
      .where('mail_message_id', '=', 'reused@customer.example')
      .execute();
    assert.equal(stored.length, 2);
  });

  test('a mail re-sent with a new Date (same Message-ID, sender, subject and text) is the same message: no second conversation, no second greeting', async () => {
    const on = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: true, text: { en: 'We got it.' } } });
    assert.equal(on.status, 200);
    const headers = { From: 'Gus <gus@customer.example>', To: address, Subject: 'Invoice 7', 'Message-ID': '<resent-1@customer.example>' };
    const first = await post(rawMail({ ...headers, Date: 'Wed, 07 Jan 2026 09:00:00 +0000' }, 'Where is invoice 7?\r\n'));
    assert.equal(first.status, 201);
    await s.app.jobs.drain();
    // The customer's mailer sends it again an hour later: a new Date, other trace headers.
    const resent = await post(
      rawMail(
        { Received: 'from mx2.example by relay.example; Wed, 07 Jan 2026 10:00:03 +0000', ...headers, Date: 'Wed, 07 Jan 2026 10:00:00 +0000' },
        'Where is invoice 7?\r\n',
      ),
    );
    assert.equal(resent.status, 201);
    await s.app.jobs.drain();
    const a = first.body.data[0];
    const b = resent.body.data[0];
    assert.equal(a.duplicate, false);
    assert.equal(b.duplicate, true, 'the re-sent mail is the stored one');
    assert.equal(b.message_id, a.message_id);
    assert.equal(b.conversation_id, a.conversation_id);
    const conversations = await s.app.db
      .selectFrom('conversations')
      .select('id')
      .where('workspace_id', '=', seed.workspaceId)
      .where('subject', '=', 'Invoice 7')
      .execute();
    assert.equal(conversations.length, 1, 'no second conversation');
    const messages = await messagesOf(a.conversation_id);
    assert.equal(messages.filter((m) => m.direction === 'in').length, 1);
    assert.equal(messages.filter((m) => m.details?.greeting).length, 1, 'greeted once');
    // A different text under the same Message-ID is still a different message (kept apart).
    const other = await post(rawMail({ ...headers, Date: 'Wed, 07 Jan 2026 11:00:00 +0000' }, 'Never mind, found it.\r\n'));
    assert.equal(other.body.data[0].duplicate, false);
    assert.notEqual(other.body.data[0].conversation_id, a.conversation_id);
    const off = await s.request('PATCH', `/v1/inboxes/${seed.inboxId}/greeting`, { token: seed.apiKey, body: { enabled: false } });
    assert.equal(off.status, 200);
  });

  test('mail stored before the Date stopped counting is still found when the same copy comes again', async () => {
    const { parseMail } = await import('../../src/mail/parse.js');
    const raw = rawMail(
      { From: 'Hal <hal@customer.example>', To: address, Subject: 'Old', 'Message-ID': '<old-1@customer.example>', Date: 'Thu, 08 Jan 2026 09:00:00 +0000' },
      'Old mail.\r\n',
    );
    const first = await post(raw);
    const a = first.body.data[0];
    // As it was stored before: under the digest that included the Date.
    const { digest, priorDigest } = await parseMail(raw);
    assert.ok(priorDigest && priorDigest !== digest);
    await s.app.db.updateTable('mail_digests').set({ digest: priorDigest }).where('message_id', '=', a.message_id).execute();
    await s.app.db.updateTable('mail_ids').set({ digest: priorDigest }).where('message_id', '=', a.message_id).execute();
    const again = await post(raw);
    assert.equal(again.body.data[0].duplicate, true);
    assert.equal(again.body.data[0].message_id, a.message_id);
  });

  test('mail without a Message-ID is stored once however often it comes, and told apart from different mail', async () => {
    const headers = { From: 'Erin <erin@customer.example>', To: address, Subject: 'No id', 'Message-ID': '', Date: 'Tue, 06 Jan 2026 09:00:00 +0100' };
    const first = await post(rawMail(headers, 'The same text.\r\n'));
    // The same mail by another way: a relay added trace headers, wrote the time in UTC and folded nothing.
    const relayed = await post(
      rawMail(
        {
          Received: 'from mx.example by relay.example; Tue, 06 Jan 2026 08:00:01 +0000',
          'Delivered-To': address,
          ...headers,
          Date: 'Tue, 06 Jan 2026 08:00:00 +0000',
        },
        'The same text.\n',
      ),
    );
    assert.equal(first.body.data[0].duplicate, false);
    assert.equal(relayed.body.data[0].duplicate, true);
    assert.equal(relayed.body.data[0].message_id, first.body.data[0].message_id);
    const different = await post(rawMail(headers, 'Another text.\r\n'));
    assert.equal(different.body.data[0].duplicate, false);
    const stored = await s.app.db.selectFrom('messages').select('body').where('workspace_id', '=', seed.workspaceId).where('subject', '=', 'No id').execute();
    assert.deepEqual(stored.map((m) => m.body.trim()).sort(), ['Another text.', 'The same text.']);
  });
  test('looking for a stored copy of new mail is one statement, and it still finds both kinds of copy', async () => {
    let statements = 0;
    const counting = s.app.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        statements++;
        return args.result;
      },
    });
    const target = { workspaceId: seed.workspaceId, inboxId: seed.inboxId };
    const fresh = { messageId: `new-${Date.now()}@customer.example`, digest: 'f'.repeat(64), sender: 'fay@customer.example' };
    assert.equal(await findStoredCopy(counting, target, fresh), undefined);
    assert.equal(statements, 1);

    const stored = await deliverMail(s, address, { From: 'Fay <fay@customer.example>', Subject: 'Copy', 'Message-ID': '<copy-1@customer.example>' });
    const digest = (await s.app.db.selectFrom('mail_digests').select('digest').where('message_id', '=', stored.message_id).executeTakeFirstOrThrow()).digest;
    const expected = { conversation_id: stored.conversation_id, message_id: stored.message_id };
    assert.deepEqual(await findStoredCopy(s.app.db, target, { messageId: 'copy-1@customer.example', digest, sender: 'fay@customer.example' }), expected);
    // Held by its Message-ID with a digest: a different message reusing the id is not a copy.
    assert.equal(
      await findStoredCopy(s.app.db, target, { messageId: 'copy-1@customer.example', digest: 'e'.repeat(64), sender: 'fay@customer.example' }),
      undefined,
    );
    // Held without a digest (stored before digests were kept): the Message-ID alone decides.
    await s.app.db.updateTable('mail_ids').set({ digest: null }).where('message_id', '=', stored.message_id).execute();
    assert.deepEqual(
      await findStoredCopy(s.app.db, target, { messageId: 'copy-1@customer.example', digest: 'e'.repeat(64), sender: 'fay@customer.example' }),
      expected,
    );
  });
});
