import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';

const SECRET = 'thread-secret';

describe('threading by Message-IDs, never by subject', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    await s.app.jobs.stop();
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function deliver(headers: Record<string, string>, body?: string) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, {
      raw: rawMail({ To: address, ...headers }, body),
      token: SECRET,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string; new_conversation: boolean; duplicate: boolean };
  }

  async function conversation(id: string) {
    return s.app.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  test('In-Reply-To joins; the same subject without references starts a new conversation', async () => {
    const first = await deliver({ Subject: 'Order 1', 'Message-ID': '<t1-a@cust.example>' });
    assert.equal(first.new_conversation, true);
    const reply = await deliver({ Subject: 'Re: Order 1', 'Message-ID': '<t1-b@cust.example>', 'In-Reply-To': '<t1-a@cust.example>' });
    assert.equal(reply.conversation_id, first.conversation_id);
    assert.equal(reply.new_conversation, false);
    const sameSubject = await deliver({ Subject: 'Re: Order 1', 'Message-ID': '<t1-c@cust.example>' });
    assert.notEqual(sameSubject.conversation_id, first.conversation_id);
  });

  test('a reply with a new subject joins by its headers', async () => {
    const first = await deliver({ Subject: 'Invoice question', 'Message-ID': '<t2-a@cust.example>' });
    const reply = await deliver({
      Subject: 'Something else entirely',
      'Message-ID': '<t2-b@cust.example>',
      'In-Reply-To': '<t2-a@cust.example>',
      References: '<t2-a@cust.example>',
    });
    assert.equal(reply.conversation_id, first.conversation_id);
  });

  test('Outlook-style: an unknown In-Reply-To with References intact joins by References (any of them)', async () => {
    const first = await deliver({ Subject: 'Thread', 'Message-ID': '<t3-a@cust.example>' });
    const second = await deliver({ Subject: 'Re: Thread', 'Message-ID': '<t3-b@cust.example>', 'In-Reply-To': '<t3-a@cust.example>' });
    assert.equal(second.conversation_id, first.conversation_id);
    // Only the middle id of References is known here; the first and last are not ours.
    const outlook = await deliver({
      Subject: 'RE: Thread',
      'Message-ID': '<t3-c@outlook.example>',
      'In-Reply-To': '<AM0PR01MB0001.changed@outlook.example>',
      References: '<unknown-root@elsewhere.example> <t3-b@cust.example>\r\n <AM0PR01MB0001.changed@outlook.example>',
    });
    assert.equal(outlook.conversation_id, first.conversation_id);
  });

  test('several In-Reply-To values: any known one joins', async () => {
    const first = await deliver({ Subject: 'Multi', 'Message-ID': '<t4-a@cust.example>' });
    const reply = await deliver({ Subject: 'Re: Multi', 'Message-ID': '<t4-b@cust.example>', 'In-Reply-To': '<nope-1@x.example> <t4-a@cust.example>' });
    assert.equal(reply.conversation_id, first.conversation_id);
  });

  test('a reply to the team’s mail joins by the Message-ID we sent', async () => {
    const first = await deliver({ Subject: 'Need help', 'Message-ID': '<t5-a@cust.example>' });
    const sent = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'We are on it.' } });
    assert.equal(sent.status, 201);
    await s.app.jobs.drain();
    const [mail] = (await sink.waitFor(1)).slice(-1);
    assert.ok(mail.parsed.messageId);
    // The customer's client quotes only our Message-ID.
    const reply = await deliver({ Subject: 'Re: Need help', 'Message-ID': '<t5-b@cust.example>', 'In-Reply-To': mail.parsed.messageId! });
    assert.equal(reply.conversation_id, first.conversation_id);
  });

  test('a closed conversation reopens on a customer reply, not on an auto-reply', async () => {
    const first = await deliver({ Subject: 'Closing soon', 'Message-ID': '<t6-a@cust.example>' });
    const closed = await s.request('PATCH', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey, body: { status: 'closed' } });
    assert.equal(closed.body.status, 'closed');

    const ooo = await deliver({
      Subject: 'Out of office',
      'Message-ID': '<t6-b@cust.example>',
      'In-Reply-To': '<t6-a@cust.example>',
      'Auto-Submitted': 'auto-replied',
    });
    assert.equal(ooo.conversation_id, first.conversation_id);
    assert.equal((await conversation(first.conversation_id)).status, 'closed');
    const stored = await s.app.db.selectFrom('messages').selectAll().where('id', '=', ooo.message_id).executeTakeFirstOrThrow();
    assert.equal(stored.automatic, 1);

    const before = await s.app.db.selectFrom('events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    await deliver({ Subject: 'Re: Closing soon', 'Message-ID': '<t6-c@cust.example>', 'In-Reply-To': '<t6-a@cust.example>' });
    assert.equal((await conversation(first.conversation_id)).status, 'open');
    const events = await s.app.db.selectFrom('events').selectAll().where('seq', '>', before.seq).orderBy('seq').execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['conversation.updated', 'message.created'],
    );
    assert.equal(JSON.parse(events[0].data).conversation.status, 'open');
    const note = await s.app.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', first.conversation_id)
      .where('kind', '=', 'event')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(note.details!).reason, 'customer_reply');
  });

  test('auto-replies, delivery reports and bulk mail are stored and flagged automatic', async () => {
    const report = [
      'From: Mail Delivery System <MAILER-DAEMON@mx.example>',
      `To: ${address}`,
      'Subject: Undelivered Mail Returned to Sender',
      'Message-ID: <t7-report@mx.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUND"',
      '',
      '--BOUND',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered.',
      '--BOUND',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example',
      '',
      'Final-Recipient: rfc822; gone@cust.example',
      'Action: failed',
      'Status: 5.1.1',
      '--BOUND--',
      '',
    ].join('\r\n');
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: report, token: SECRET });
    assert.equal(r.status, 201);
    const bulk = await deliver({ Subject: 'Newsletter', 'Message-ID': '<t7-bulk@news.example>', Precedence: 'bulk' });
    const human = await deliver({ Subject: 'A person', 'Message-ID': '<t7-human@cust.example>', 'Auto-Submitted': 'no' });
    const flags = await s.app.db
      .selectFrom('messages')
      .select(['id', 'automatic'])
      .where('id', 'in', [r.body.data[0].message_id, bulk.message_id, human.message_id])
      .execute();
    const byId = new Map(flags.map((f) => [f.id, f.automatic]));
    assert.equal(byId.get(r.body.data[0].message_id), 1);
    assert.equal(byId.get(bulk.message_id), 1);
    assert.equal(byId.get(human.message_id), 0);
    const api = await s.request('GET', `/v1/conversations/${bulk.conversation_id}/messages`, { token: seed.apiKey });
    assert.equal(api.body.data[0].automatic, true);
    // Nothing was mailed back for any of them.
    const sentBefore = sink.messages.length;
    await s.app.jobs.drain();
    assert.equal(sink.messages.length, sentBefore);
  });
});
