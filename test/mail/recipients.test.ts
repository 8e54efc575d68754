// Issue 33: participants, reply-all by default, To/Cc/Bcc named by the team, thread joiners. Inbound
// mail through the ingress, outbound caught by an smtp-server sink (envelope and headers as sent).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type CaughtMail, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { connectMcp } from '../mcp/helpers.js';

const SECRET = 'recipients-secret';

type Address = { name: string | null; address: string };

function header(mail: CaughtMail, field: 'to' | 'cc' | 'bcc'): Address[] {
  const v = mail.parsed[field];
  if (!v) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((a) => a.value.map((x) => ({ name: x.name || null, address: x.address! })));
}

describe('recipients: participants, reply-all, To/Cc/Bcc', () => {
  let s: TestServer;
  let seed: Seed;
  let address: string;
  let ownerEmail: string;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ env: { SVC_INGRESS_SECRET: SECRET } });
    await s.app.jobs.stop(); // jobs run only when the test drains them
    seed = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    ownerEmail = (await s.app.db.selectFrom('people').select('email').where('id', '=', seed.ownerId).executeTakeFirstOrThrow()).email;
  });
  after(async () => {
    await s.stop();
    await sink.close();
  });

  async function inbound(headers: Record<string, string>) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw: rawMail({ To: address, ...headers }), token: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  async function reply(conversationId: string, body: Record<string, unknown>) {
    return s.request('POST', `/v1/conversations/${conversationId}/messages`, { token: seed.apiKey, body: { body: 'Answer', ...body } });
  }

  async function sendAll(): Promise<CaughtMail> {
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const caught = await sink.waitFor(count + 1);
    assert.equal(caught.length, count + 1, 'one mail sent');
    return caught[count];
  }

  const participants = async (id: string) => (await s.request('GET', `/v1/conversations/${id}`, { token: seed.apiKey })).body.participants as unknown[];

  test('inbound To/Cc become participants (never the team’s addresses); a reply goes to all of them', async () => {
    const first = await inbound({
      From: 'Ann Customer <ann@cust.example>',
      To: `Support <${address}>, Bob <bob@cust.example>`,
      Cc: `Carol <CAROL@cust.example>, Owner <${ownerEmail}>`,
      Subject: 'Order 42',
      'Message-ID': '<r1-a@cust.example>',
    });
    assert.deepEqual(await participants(first.conversation_id), [
      { name: 'Ann Customer', address: 'ann@cust.example', role: 'to' },
      { name: 'Bob', address: 'bob@cust.example', role: 'cc' },
      { name: 'Carol', address: 'carol@cust.example', role: 'cc' },
    ]);
    const preview = await s.request('GET', `/v1/conversations/${first.conversation_id}/reply-recipients`, { token: seed.apiKey });
    assert.deepEqual(preview.body, {
      to: [{ name: 'Ann Customer', address: 'ann@cust.example' }],
      cc: [
        { name: 'Bob', address: 'bob@cust.example' },
        { name: 'Carol', address: 'carol@cust.example' },
      ],
    });

    const r = await reply(first.conversation_id, {});
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.email.to, [{ name: 'Ann Customer', address: 'ann@cust.example' }]);
    assert.deepEqual(r.body.email.cc, preview.body.cc);
    assert.equal(r.body.email.bcc, undefined);
    const mail = await sendAll();
    assert.deepEqual([...mail.to].sort(), ['ann@cust.example', 'bob@cust.example', 'carol@cust.example']);
    assert.deepEqual(header(mail, 'to'), [{ name: 'Ann Customer', address: 'ann@cust.example' }]);
    assert.deepEqual(header(mail, 'cc'), preview.body.cc);
    assert.equal(mail.parsed.inReplyTo, '<r1-a@cust.example>');
    assert.ok(!mail.raw.toString().includes(ownerEmail) && !mail.to.includes(address), 'never to the team’s own addresses');
    const sent = await s.request('GET', `/v1/conversations/${first.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey });
    assert.equal(sent.body.status, 'sent');
    assert.deepEqual(sent.body.email.cc, preview.body.cc);
  });

  test('Bcc reaches its recipient but no header, event, webhook outbox or participant list; named To/Cc replace reply-all', async () => {
    const first = await inbound({ From: 'dan@cust.example', Cc: 'erin@cust.example', Subject: 'Bcc', 'Message-ID': '<r2-a@cust.example>' });
    const seqBefore = (await s.app.db.selectFrom('events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()).seq;
    const r = await reply(first.conversation_id, { cc: ['Frank <frank@cust.example>'], bcc: ['Secret Auditor <auditor@hidden.example>'] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.email.to, [{ name: null, address: 'dan@cust.example' }]);
    assert.deepEqual(r.body.email.cc, [{ name: 'Frank', address: 'frank@cust.example' }]);
    assert.deepEqual(r.body.email.bcc, [{ name: 'Secret Auditor', address: 'auditor@hidden.example' }]);
    const mail = await sendAll();
    assert.deepEqual([...mail.to].sort(), ['auditor@hidden.example', 'dan@cust.example', 'frank@cust.example']);
    assert.ok(!mail.raw.toString().toLowerCase().includes('auditor'), 'no Bcc header in the mail');
    assert.deepEqual(header(mail, 'cc'), [{ name: 'Frank', address: 'frank@cust.example' }]);
    // The team sees it; events (realtime, webhooks) and their outbox never carry it.
    const list = await s.request('GET', `/v1/conversations/${first.conversation_id}/messages?order=asc`, { token: seed.apiKey });
    assert.deepEqual(list.body.data.find((m: { id: string }) => m.id === r.body.id).email.bcc, r.body.email.bcc);
    const events = await s.app.db.selectFrom('events').select(['type', 'data']).where('seq', '>', seqBefore).execute();
    assert.ok(events.some((e) => e.type === 'message.created') && events.some((e) => e.type === 'message.updated'));
    const outbox = await s.app.db.selectFrom('webhook_outbox').selectAll().execute();
    for (const text of [...events.map((e) => e.data), JSON.stringify(outbox)]) assert.ok(!text.includes('auditor@hidden.example'));
    // Frank was added by the team (Cc); the Bcc never is a participant; Erin stays one.
    assert.deepEqual(await participants(first.conversation_id), [
      { name: null, address: 'dan@cust.example', role: 'to' },
      { name: null, address: 'erin@cust.example', role: 'cc' },
      { name: 'Frank', address: 'frank@cust.example', role: 'cc' },
    ]);
  });

  test('a thread joiner is the author of its mail and does not change where replies go; automatic mail adds nobody', async () => {
    const first = await inbound({ From: 'Gina <gina@cust.example>', Subject: 'Joiner', 'Message-ID': '<r3-a@cust.example>' });
    const joined = await inbound({
      From: 'Hal Stranger <hal@else.example>',
      Cc: 'ivy@else.example',
      Subject: 'Re: Joiner',
      'Message-ID': '<r3-b@else.example>',
      'In-Reply-To': '<r3-a@cust.example>',
    });
    assert.equal(joined.conversation_id, first.conversation_id);
    const message = (await s.request('GET', `/v1/conversations/${first.conversation_id}/messages/${joined.message_id}`, { token: seed.apiKey })).body;
    const conversation = (await s.request('GET', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey })).body;
    assert.equal(message.author.type, 'contact');
    assert.notEqual(message.author.contact_id, conversation.contact_id);
    assert.deepEqual(message.email.from, { name: 'Hal Stranger', address: 'hal@else.example' });
    assert.deepEqual(conversation.participants, [{ name: 'Gina', address: 'gina@cust.example', role: 'to' }]);
    // An auto-reply from the customer naming someone new adds nobody either.
    await inbound({
      From: 'gina@cust.example',
      Cc: 'jay@cust.example',
      'Auto-Submitted': 'auto-replied',
      Subject: 'Out of office',
      'In-Reply-To': '<r3-a@cust.example>',
    });
    assert.deepEqual(await participants(first.conversation_id), [{ name: 'Gina', address: 'gina@cust.example', role: 'to' }]);
    const r = await reply(first.conversation_id, {});
    assert.equal(r.status, 201);
    const mail = await sendAll();
    assert.deepEqual(mail.to, ['gina@cust.example']);
    // Adding the joiner (the panel's "add as participant") puts them in Cc from then on.
    const patched = await s.request('PATCH', `/v1/conversations/${first.conversation_id}`, {
      token: seed.apiKey,
      body: { participants: [...conversation.participants, { name: 'Hal Stranger', address: 'hal@else.example', role: 'cc' }] },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const again = await reply(first.conversation_id, {});
    assert.deepEqual(again.body.email.cc, [{ name: 'Hal Stranger', address: 'hal@else.example' }]);
    assert.deepEqual((await sendAll()).to.sort(), ['gina@cust.example', 'hal@else.example']);
  });

  test('a participant who writes stays in Cc; To is the customer (at its Reply-To when set)', async () => {
    const first = await inbound({ From: 'kim@cust.example', Cc: 'Lee <lee@cust.example>', Subject: 'Round', 'Message-ID': '<r4-a@cust.example>' });
    await inbound({
      From: 'Lee <lee@cust.example>',
      'Reply-To': 'lee.desk@cust.example',
      To: address,
      Cc: 'kim@cust.example',
      Subject: 'Re: Round',
      'In-Reply-To': '<r4-a@cust.example>',
    });
    const r = await reply(first.conversation_id, {});
    assert.deepEqual(r.body.email.to, [{ name: null, address: 'kim@cust.example' }]);
    assert.deepEqual(r.body.email.cc, [{ name: 'Lee', address: 'lee@cust.example' }]);
    assert.deepEqual((await sendAll()).to.sort(), ['kim@cust.example', 'lee@cust.example']);
    // The customer's own Reply-To is where To goes.
    await inbound({ From: 'kim@cust.example', 'Reply-To': 'kim.home@cust.example', Subject: 'Re: Round', 'In-Reply-To': '<r4-a@cust.example>' });
    const again = await reply(first.conversation_id, {});
    assert.deepEqual(again.body.email.to, [{ name: null, address: 'kim.home@cust.example' }]);
    assert.deepEqual(again.body.email.cc, [{ name: 'Lee', address: 'lee@cust.example' }]);
    await sendAll();
  });

  test('bad recipients: 400 naming the field, nothing stored or sent', async () => {
    const first = await inbound({ From: 'max@cust.example', Subject: 'Bad', 'Message-ID': '<r5-a@cust.example>' });
    const before = (await s.request('GET', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey })).body.data.length;
    const jobs = await s.app.db.selectFrom('jobs').select('id').execute();
    const many = Array.from({ length: 30 }, (_, i) => `p${i}@cust.example`);
    const cases: [Record<string, unknown>, string][] = [
      [{ to: ['max@cust.example'], cc: many, bcc: many.slice(0, 20).map((a) => `b${a}`) }, 'bcc'],
      [{ cc: Array.from({ length: 51 }, (_, i) => `q${i}@cust.example`) }, 'cc'],
      [{ cc: ['ok@cust.example', 'not an address'] }, 'cc.1'],
      [{ to: ['Name <broken@>'] }, 'to.0'],
      [{ bcc: [address] }, 'bcc.0'],
      [{ cc: [`Owner <${ownerEmail.toUpperCase()}>`] }, 'cc.0'],
      [{ to: [] }, 'to'],
      [{ kind: 'note', cc: ['x@cust.example'] }, 'cc'],
    ];
    for (const [body, path] of cases) {
      const r = await reply(first.conversation_id, body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.ok(
        r.body.error.issues.some((i: { path: string }) => i.path === path),
        `${path} named: ${JSON.stringify(r.body.error.issues)}`,
      );
    }
    assert.equal((await s.request('GET', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey })).body.data.length, before);
    assert.equal((await s.app.db.selectFrom('jobs').select('id').execute()).length, jobs.length);
    assert.deepEqual(await participants(first.conversation_id), [{ name: null, address: 'max@cust.example', role: 'to' }]);
    // Participants: the team's addresses and invalid ones are refused too; a stranger's conversation is 404.
    for (const [list, path] of [
      [[{ address }], 'participants.0.address'],
      [
        [
          { address: 'a@cust.example', role: 'to' },
          { address: 'nope', role: 'cc' },
        ],
        'participants.1.address',
      ],
    ] as const) {
      const r = await s.request('PATCH', `/v1/conversations/${first.conversation_id}`, {
        token: seed.apiKey,
        body: { participants: list.map((p) => ({ role: 'cc', ...p })) },
      });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.ok(
        r.body.error.issues.some((i: { path: string }) => i.path === path),
        JSON.stringify(r.body),
      );
    }
    const other = await seedWorkspace(s.app);
    const foreign = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, {
      token: other.apiKey,
      body: { body: 'x', cc: ['a@b.example'] },
    });
    assert.equal(foreign.status, 404);
  });

  test('editing participants records one conversation.updated; the next reply follows the list', async () => {
    const first = await inbound({ From: 'nia@cust.example', Cc: 'oz@cust.example', Subject: 'Edit', 'Message-ID': '<r6-a@cust.example>' });
    const seq = (await s.app.db.selectFrom('events').select('seq').orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow()).seq;
    const r = await s.request('PATCH', `/v1/conversations/${first.conversation_id}`, {
      token: seed.ownerToken,
      body: {
        participants: [
          { address: 'nia@cust.example', role: 'to' },
          { address: 'Pam <pam@cust.example>', role: 'cc' },
        ],
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.participants, [
      { name: null, address: 'nia@cust.example', role: 'to' },
      { name: 'Pam', address: 'pam@cust.example', role: 'cc' },
    ]);
    const events = await s.app.db.selectFrom('events').select(['type']).where('seq', '>', seq).where('type', '=', 'conversation.updated').execute();
    assert.equal(events.length, 1);
    const sent = await reply(first.conversation_id, {});
    assert.deepEqual(sent.body.email.cc, [{ name: 'Pam', address: 'pam@cust.example' }]);
    assert.deepEqual((await sendAll()).to.sort(), ['nia@cust.example', 'pam@cust.example']);
  });

  test('the MCP reply tool takes to, cc and bcc as the API does', async () => {
    const first = await inbound({ From: 'quinn@cust.example', Cc: 'rae@cust.example', Subject: 'MCP', 'Message-ID': '<r7-a@cust.example>' });
    const mcp = await connectMcp(s, seed.apiKey);
    try {
      const bad = await mcp.call('reply', { conversation_id: first.conversation_id, body: 'x', cc: ['nope'] });
      assert.equal(bad.isError, true);
      assert.match(bad.text, /cc\.0/);
      const r = await mcp.call('reply', { conversation_id: first.conversation_id, body: 'Done.', cc: [], bcc: ['sam@hidden.example'] });
      assert.equal(r.isError, false, r.text);
      assert.deepEqual(r.body.email.cc, []);
      assert.deepEqual(r.body.email.bcc, [{ name: null, address: 'sam@hidden.example' }]);
    } finally {
      await mcp.close();
    }
    const mail = await sendAll();
    assert.deepEqual(mail.to.sort(), ['quinn@cust.example', 'sam@hidden.example']);
    assert.equal(header(mail, 'cc').length, 0);
  });
});
