// Issue 33: forwarding a message and starting a conversation by mail. Inbound mail through the
// ingress, outbound caught by an smtp-server sink (envelope, headers and parts as sent), webhooks
// checked with standardwebhooks, answers threading back through the ingress.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createApiKey } from '../../src/api-keys/service.js';
import { createChatChannel } from '../../src/channels/service.js';
import { insertContact } from '../../src/contacts/service.js';
import { startConversation } from '../../src/conversations/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { ManualClock } from '../../src/platform/clock.js';
import { type Seed, seedWorkspace } from '../helpers/fixtures.js';
import { rawMail, SINK_LOGIN, seedEmailChannel } from '../helpers/mail.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { type CaughtMail, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.js';
import { type Receiver, startReceiver, verifyDelivery } from '../helpers/webhooks.js';
import { connectMcp } from '../mcp/helpers.js';

const SECRET = 'forward-secret';
const MAX_BYTES = 100_000;
type Address = { name: string | null; address: string };

function header(mail: CaughtMail, field: 'to' | 'cc' | 'bcc'): Address[] {
  const v = mail.parsed[field];
  if (!v) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((a) => a.value.map((x) => ({ name: x.name || null, address: x.address! })));
}

/** A customer's mail with a text and an html part and one attached file. */
function richMail(headers: Record<string, string>, file: { name: string; content: string }): Buffer {
  const lines = Object.entries({ 'MIME-Version': '1.0', 'Content-Type': 'multipart/mixed; boundary="mix"', ...headers }).map(([k, v]) => `${k}: ${v}`);
  return Buffer.from(
    [
      ...lines,
      '',
      '--mix',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The invoice is wrong.',
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>The invoice is <b>wrong</b>.</p>',
      '--alt--',
      '--mix',
      `Content-Type: text/plain; name="${file.name}"`,
      `Content-Disposition: attachment; filename="${file.name}"`,
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(file.content).toString('base64'),
      '--mix--',
      '',
    ].join('\r\n'),
  );
}

describe('forward and new conversations by mail', () => {
  let s: TestServer;
  let seed: Seed;
  let other: Seed;
  let clock: ManualClock;
  let address: string;
  let sink: SmtpSink;
  let rx: Receiver;
  let hook: { path: string; secret: string };

  before(async () => {
    clock = new ManualClock('2030-03-04T10:00:00Z');
    sink = await startSmtpSink(SINK_LOGIN);
    s = await startTestServer({ clock, env: { SVC_INGRESS_SECRET: SECRET, SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_ATTACHMENT_MAX_BYTES: String(MAX_BYTES) } });
    await s.app.jobs.stop(); // jobs run only when the test drains them
    seed = await seedWorkspace(s.app);
    other = await seedWorkspace(s.app);
    address = (await seedEmailChannel(s.app, seed, { smtpPort: sink.port })).address!;
    await seedEmailChannel(s.app, other, { smtpPort: sink.port });
    rx = await startReceiver();
    const path = '/hooks';
    const r = await s.request('POST', '/v1/webhooks', {
      token: seed.apiKey,
      body: { url: rx.url + path, events: ['conversation.created', 'message.created'] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    hook = { path, secret: r.body.secret };
  });
  after(async () => {
    await rx.close();
    await s.stop();
    await sink.close();
  });

  async function inbound(raw: Buffer) {
    const r = await s.request('POST', `/v1/ingress/email?to=${encodeURIComponent(address)}`, { raw, token: SECRET });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.data[0] as { conversation_id: string; message_id: string };
  }

  async function sendAll(): Promise<CaughtMail> {
    const count = sink.messages.length;
    await s.app.jobs.drain();
    const caught = await sink.waitFor(count + 1);
    assert.equal(caught.length, count + 1, 'one mail sent');
    return caught[count];
  }

  const counts = async () => ({
    messages: Number(
      (
        await s.app.db
          .selectFrom('messages')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    conversations: Number(
      (
        await s.app.db
          .selectFrom('conversations')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    contacts: Number(
      (
        await s.app.db
          .selectFrom('contacts')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
    jobs: Number(
      (
        await s.app.db
          .selectFrom('jobs')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  });

  async function webhooksFor(type: string, messageId: string) {
    await s.app.jobs.drain();
    return rx.received
      .filter((r) => r.path === hook.path)
      .map((r) => ({ r, p: verifyDelivery(r, hook.secret, clock) }))
      .filter(({ p }) => p.type === type && (p.data.message?.id === messageId || p.data.conversation?.id === messageId));
  }

  test('a forward: Fwd: subject, quoted headers, note on top, attachments, multipart/alternative; Bcc only in the envelope; the answer threads back', async () => {
    const first = await inbound(
      richMail(
        {
          From: 'Ann Customer <ann@cust.example>',
          To: `Support <${address}>`,
          Cc: 'Bob <bob@cust.example>',
          Subject: 'Invoice 7',
          'Message-ID': '<f1-a@cust.example>',
        },
        { name: 'invoice.txt', content: 'line 1: 100 EUR' },
      ),
    );
    const before = (await s.request('GET', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey })).body;
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/forward`, {
      token: seed.apiKey,
      body: {
        message_id: first.message_id,
        to: ['Accounting <books@partner.example>'],
        cc: ['cfo@partner.example'],
        bcc: ['Archive <archive@hidden.example>'],
        body: 'Could you check this invoice?',
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.subject, 'Fwd: Invoice 7');
    assert.equal(r.body.status, 'pending');
    assert.deepEqual(r.body.details, { forward: { message_id: first.message_id } });
    assert.deepEqual(r.body.email.to, [{ name: 'Accounting', address: 'books@partner.example' }]);
    assert.deepEqual(r.body.email.cc, [{ name: null, address: 'cfo@partner.example' }]);
    assert.deepEqual(r.body.email.bcc, [{ name: 'Archive', address: 'archive@hidden.example' }]);
    assert.deepEqual(r.body.email.in_reply_to, []);
    assert.deepEqual(
      r.body.attachments.map((a: { filename: string }) => a.filename),
      ['invoice.txt'],
    );

    const mail = await sendAll();
    assert.equal(mail.parsed.subject, 'Fwd: Invoice 7');
    assert.equal(mail.parsed.inReplyTo, undefined, 'a forward answers nothing');
    assert.equal(mail.parsed.messageId, `<${r.body.email.message_id}>`);
    assert.deepEqual([...mail.to].sort(), ['archive@hidden.example', 'books@partner.example', 'cfo@partner.example']);
    assert.deepEqual(header(mail, 'to'), [{ name: 'Accounting', address: 'books@partner.example' }]);
    assert.ok(!mail.raw.toString().toLowerCase().includes('archive@hidden'), 'no Bcc header');
    assert.ok(!mail.to.includes(address), 'never to the team’s own address');
    const text = mail.parsed.text!;
    assert.ok(text.startsWith('Could you check this invoice?'), text);
    assert.ok(text.indexOf('Could you check') < text.indexOf('---------- Forwarded message ---------'));
    for (const line of ['From: Ann Customer <ann@cust.example>', 'Date: Mon, 04 Mar 2030 10:00:00 +0000', 'Subject: Invoice 7', 'Cc: Bob <bob@cust.example>']) {
      assert.ok(text.includes(line), `${line} in ${text}`);
    }
    assert.match(text, /To: Support <support-[^>]+>/);
    assert.ok(text.includes('The invoice is wrong.'));
    assert.match(mail.raw.toString(), /Content-Type: multipart\/alternative/);
    assert.ok(mail.parsed.html && mail.parsed.html.includes('<b>wrong</b>') && mail.parsed.html.includes('Forwarded message'), String(mail.parsed.html));
    assert.deepEqual(
      mail.parsed.attachments.map((a) => [a.filename, a.content.toString()]),
      [['invoice.txt', 'line 1: 100 EUR']],
    );
    const sent = (await s.request('GET', `/v1/conversations/${first.conversation_id}/messages/${r.body.id}`, { token: seed.apiKey })).body;
    assert.equal(sent.status, 'sent');
    assert.equal(sent.email.subject, 'Fwd: Invoice 7');

    // Forward recipients are not participants; the conversation's reply-all is unchanged.
    const after = (await s.request('GET', `/v1/conversations/${first.conversation_id}`, { token: seed.apiKey })).body;
    assert.deepEqual(after.participants, before.participants);

    // message.created reached the webhook (signature verified), without the Bcc.
    const hooks = await webhooksFor('message.created', r.body.id);
    assert.equal(hooks.length, 1);
    assert.equal(hooks[0].p.data.message.subject, 'Fwd: Invoice 7');
    assert.equal(hooks[0].p.data.message.email.bcc, undefined);
    assert.ok(!hooks[0].r.body.includes('archive@hidden.example'));

    // A reply to the customer still answers the customer's mail, never the forward.
    const reply = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey, body: { body: 'We are on it.' } });
    assert.equal(reply.status, 201, JSON.stringify(reply.body));
    const replyMail = await sendAll();
    assert.equal(replyMail.parsed.inReplyTo, '<f1-a@cust.example>');
    assert.equal(replyMail.parsed.subject, 'Re: Invoice 7');

    // The partner's answer to the forward threads back into the same conversation, as its sender's.
    const answer = await inbound(
      rawMail({
        From: 'Accounting <books@partner.example>',
        To: `Support <${address}>`,
        Subject: 'Re: Fwd: Invoice 7',
        'Message-ID': '<f1-b@partner.example>',
        'In-Reply-To': `<${r.body.email.message_id}>`,
      }),
    );
    assert.equal(answer.conversation_id, first.conversation_id);
    const answered = (await s.request('GET', `/v1/conversations/${first.conversation_id}/messages/${answer.message_id}`, { token: seed.apiKey })).body;
    assert.deepEqual(answered.email.from, { name: 'Accounting', address: 'books@partner.example' });
    assert.notEqual(answered.author.contact_id, after.contact_id);
    const recipients = (await s.request('GET', `/v1/conversations/${first.conversation_id}/reply-recipients`, { token: seed.apiKey })).body;
    assert.deepEqual(recipients.to, [{ name: 'Ann Customer', address: 'ann@cust.example' }]);
  });

  test('include_attachments false forwards the text alone; a plain original forwards as plain text', async () => {
    const first = await inbound(richMail({ From: 'cal@cust.example', Subject: 'Files', 'Message-ID': '<f2-a@cust.example>' }, { name: 'a.txt', content: 'A' }));
    const r = await s.request('POST', `/v1/conversations/${first.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: first.message_id, to: ['dee@partner.example'], include_attachments: false },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.attachments, []);
    const mail = await sendAll();
    assert.deepEqual(mail.parsed.attachments, []);
    assert.ok(mail.parsed.text!.startsWith('---------- Forwarded message ---------'), mail.parsed.text);

    const plain = await inbound(rawMail({ From: 'eve@cust.example', Subject: 'Fwd: already', 'Message-ID': '<f2-b@cust.example>' }, 'Just text.\r\n'));
    const p = await s.request('POST', `/v1/conversations/${plain.conversation_id}/forward`, {
      token: seed.apiKey,
      body: { message_id: plain.message_id, to: ['dee@partner.example'], body: 'FYI' },
    });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    assert.equal(p.body.subject, 'Fwd: already', 'Fwd: is not repeated');
    assert.equal(p.body.html, null);
    const plainMail = await sendAll();
    assert.equal(plainMail.parsed.html, false);
    assert.ok(!plainMail.raw.toString().includes('multipart/alternative'));
  });

  test('a picture pasted into the note goes in place (an upload of the conversation, an inline part); ids are checked', async () => {
    const first = await inbound(rawMail({ From: 'gus@cust.example', Subject: 'Screen', 'Message-ID': '<f2-c@cust.example>' }, 'See the error.\r\n'));
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const up = await s.request('POST', `/v1/conversations/${first.conversation_id}/attachments?filename=shot.png`, {
      token: seed.apiKey,
      raw: png,
      headers: { 'content-type': 'image/png' },
    });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const forward = (ids: string[]) =>
      s.request('POST', `/v1/conversations/${first.conversation_id}/forward`, {
        token: seed.apiKey,
        body: {
          message_id: first.message_id,
          to: ['dee@partner.example'],
          html: `<p>Look: <img src="/v1/attachments/${up.body.id}/content" alt="shot.png"></p>`,
          attachment_ids: ids,
        },
      });
    const before = await counts();
    const foreign = await forward(['att_unknown']);
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.deepEqual(await counts(), before, 'a refused forward changes nothing');
    const r = await forward([up.body.id]);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const mail = await sendAll();
    assert.match(mail.raw.toString(), /Content-Type: multipart\/related;/i);
    const part = mail.parsed.attachments.find((a) => a.related);
    assert.ok(part?.cid && part.content.equals(png), 'the pasted picture is an inline part');
    assert.ok(!mail.raw.toString().includes('/v1/attachments/'), 'no panel URL in the mail');
  });

  test('a chat message is forwarded through the inbox’s e-mail channel, never shown to the visitor; an inbox without one answers 409', async () => {
    const ORIGIN = 'https://shop.example.com';
    const publicKey = (await createChatChannel(s.app, { workspaceId: seed.workspaceId, inboxId: seed.inboxId, name: 'Widget', origins: [ORIGIN] })).public_key!;
    const visitor = (method: string, path: string, opts: { token?: string; body?: unknown } = {}) =>
      s.request(method, path, { token: opts.token, body: opts.body, headers: { origin: ORIGIN } });
    const v = (await visitor('POST', '/v1/widget/sessions', { body: { public_key: publicKey, email: 'fay@cust.example', name: 'Fay' } })).body;
    const started = await visitor('POST', '/v1/widget/conversations', { token: v.token, body: { body: 'Is the shop open on Sunday?' } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const chatId = started.body.conversation.id as string;
    const first = (await s.request('GET', `/v1/conversations/${chatId}/messages?order=asc`, { token: seed.apiKey })).body.data[0];

    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/widget/realtime?token=${v.token}`, { headers: { origin: ORIGIN } });
    const frames: { type: string; message?: { id: string; body: string } }[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    try {
      await new Promise((r) => ws.once('open', r));
      await until(() => frames.some((f) => f.type === 'hello'));
      const r = await s.request('POST', `/v1/conversations/${chatId}/forward`, {
        token: seed.apiKey,
        body: { message_id: first.id, to: ['shop@partner.example'], body: 'Internal: can you answer this?' },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const mail = await sendAll();
      assert.equal(mail.parsed.subject, 'Fwd: Is the shop open on Sunday?');
      assert.ok(mail.parsed.text!.includes('From: Fay <fay@cust.example>'), mail.parsed.text);
      assert.ok(mail.parsed.text!.includes('Is the shop open on Sunday?'));
      // A reply after it reaches the visitor; the forward never does (stream, messages, the list's latest line).
      const reply = await s.request('POST', `/v1/conversations/${chatId}/messages`, { token: seed.apiKey, body: { body: 'Yes, 10 to 4.' } });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
      await until(() => frames.some((f) => f.type === 'message' && f.message?.id === reply.body.id));
      assert.ok(!frames.some((f) => f.message?.id === r.body.id), 'the forward is not streamed to the visitor');
      const seen = (await visitor('GET', `/v1/widget/conversations/${chatId}/messages`, { token: v.token })).body.data as { id: string }[];
      assert.deepEqual(
        seen.map((m) => m.id),
        [first.id, reply.body.id],
      );
    } finally {
      ws.close();
    }

    const tx = { db: s.app.db, clock };
    const contact = await insertContact(tx, { workspaceId: seed.workspaceId, name: 'Gil', emails: ['gil@cust.example'] });
    const bare = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Chat only' });
    const lone = await startConversation(tx, {
      conversation: { workspaceId: seed.workspaceId, inboxId: bare.id, contactId: contact.contact.id, source: 'chat' },
      contact,
      message: { kind: 'message', direction: 'in', author: { type: 'contact', contactId: contact.contact.id }, body: 'Hello?' },
    });
    const refused = await s.request('POST', `/v1/conversations/${lone.conversation.id}/forward`, {
      token: seed.apiKey,
      body: { message_id: lone.message.id, to: ['shop@partner.example'] },
    });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'no_email_channel');
  });

  test('bad forwards: 404 for unknown or foreign ids (before the body is judged), 400 naming the field; nothing changes', async () => {
    const first = await inbound(rawMail({ From: 'gus@cust.example', Subject: 'Bad', 'Message-ID': '<f4-a@cust.example>' }));
    const note = await s.request('POST', `/v1/conversations/${first.conversation_id}/messages`, { token: seed.apiKey, body: { kind: 'note', body: 'inside' } });
    const start = await counts();
    const many = Array.from({ length: 51 }, (_, i) => `p${i}@partner.example`);
    const fwd = (id: string, body: Record<string, unknown>, token = seed.apiKey) =>
      s.request('POST', `/v1/conversations/${id}/forward`, { token, body: { message_id: first.message_id, to: ['ok@partner.example'], ...body } });
    const cases: [Awaited<ReturnType<typeof fwd>>, number, string | null][] = [
      [await fwd('cv_unknown', { to: many }), 404, null],
      [await fwd(first.conversation_id, { to: many }, other.apiKey), 404, null],
      [await fwd(first.conversation_id, { message_id: 'm_unknown' }), 404, null],
      [await fwd(first.conversation_id, { message_id: note.body.id }), 400, 'message_id'],
      [await fwd(first.conversation_id, { to: many }), 400, 'to'],
      [await fwd(first.conversation_id, { cc: many.slice(0, 30), bcc: many.slice(30) }), 400, 'bcc'],
      [await fwd(first.conversation_id, { cc: ['not an address'] }), 400, 'cc.0'],
      [await fwd(first.conversation_id, { to: [] }), 400, 'to'],
      [await fwd(first.conversation_id, { bcc: [`Us <${address}>`] }), 400, 'bcc.0'],
    ];
    for (const [r, status, path] of cases) {
      assert.equal(r.status, status, JSON.stringify(r.body));
      if (path) assert.equal(r.body.error.issues[0].path, path, JSON.stringify(r.body));
    }
    assert.deepEqual(await counts(), start);
  });

  test('a new conversation: pending, contact made, participants, first mail as written; the answer threads in; webhooks', async () => {
    const r = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        to: ['Hana New <HANA@new.example>'],
        cc: ['ivo@new.example'],
        bcc: ['audit@hidden.example'],
        subject: 'Your trial',
        html: '<p>Hello <b>Hana</b>, how is the trial going?</p>',
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const { conversation, message } = r.body;
    assert.equal(conversation.status, 'pending');
    assert.equal(conversation.source, 'email');
    assert.equal(conversation.subject, 'Your trial');
    assert.deepEqual(conversation.participants, [
      { name: 'Hana New', address: 'hana@new.example', role: 'to' },
      { name: null, address: 'ivo@new.example', role: 'cc' },
    ]);
    const contact = (await s.request('GET', `/v1/contacts/${conversation.contact_id}`, { token: seed.apiKey })).body;
    assert.equal(contact.name, 'Hana New');
    assert.deepEqual(contact.emails, ['hana@new.example']);
    assert.equal(message.status, 'pending');
    assert.deepEqual(message.email.bcc, [{ name: null, address: 'audit@hidden.example' }]);

    const mail = await sendAll();
    assert.equal(mail.parsed.subject, 'Your trial', 'the first mail answers nothing: no Re:');
    assert.equal(mail.parsed.inReplyTo, undefined);
    assert.deepEqual([...mail.to].sort(), ['audit@hidden.example', 'hana@new.example', 'ivo@new.example']);
    assert.deepEqual(header(mail, 'cc'), [{ name: null, address: 'ivo@new.example' }]);
    assert.ok(!mail.raw.toString().includes('audit@hidden'));
    assert.match(mail.raw.toString(), /multipart\/alternative/);
    assert.ok(mail.parsed.text!.includes('Hello Hana, how is the trial going?'));

    const created = await webhooksFor('conversation.created', conversation.id);
    assert.equal(created.length, 1);
    assert.equal(created[0].p.data.conversation.status, 'pending');
    const messageHooks = await webhooksFor('message.created', message.id);
    assert.equal(messageHooks.length, 1);
    assert.ok(!messageHooks[0].r.body.includes('audit@hidden.example'));

    const answer = await inbound(
      rawMail({
        From: 'Hana New <hana@new.example>',
        Subject: 'Re: Your trial',
        'Message-ID': '<n1-b@new.example>',
        'In-Reply-To': `<${message.email.message_id}>`,
      }),
    );
    assert.equal(answer.conversation_id, conversation.id);
    const list = await s.request('GET', `/v1/conversations?contact_id=${conversation.contact_id}`, { token: seed.apiKey });
    assert.equal(list.body.data.length, 1, 'one conversation for the contact');

    // Writing to a known contact by id reuses it; the second mail of that conversation is a reply (Re:).
    const again = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: [conversation.contact_id], subject: 'Second topic', body: 'Another question.' },
    });
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.equal(again.body.conversation.contact_id, conversation.contact_id);
    assert.deepEqual(again.body.message.email.to, [{ name: 'Hana New', address: 'hana@new.example' }]);
    const second = await sendAll();
    assert.equal(second.parsed.subject, 'Second topic');
  });

  test('a new conversation with files: uploaded to the inbox first (the reply limit), the first mail carries them; ids are checked', async () => {
    const upload = (inboxId: string, filename: string, type: string, bytes: Buffer, token = seed.apiKey) =>
      s.request('POST', `/v1/inboxes/${inboxId}/attachments?filename=${filename}`, { token, raw: bytes, headers: { 'content-type': type } });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const picture = await upload(seed.inboxId, 'shot.png', 'image/png', png);
    assert.equal(picture.status, 201, JSON.stringify(picture.body));
    const file = await upload(seed.inboxId, 'terms.txt', 'text/plain', Buffer.from('The terms'));
    assert.equal(file.status, 201, JSON.stringify(file.body));
    assert.deepEqual([file.body.filename, file.body.size, file.body.inline], ['terms.txt', 9, false]);
    // Before it is sent the upload can be read back by its URL, like a reply's.
    const content = await s.request('GET', file.body.url, { token: seed.apiKey });
    assert.equal(content.status, 200);
    assert.equal(content.body, 'The terms');
    // The same limit as a reply's upload; another workspace's inbox is 404; nothing is stored.
    const start = await counts();
    const big = await upload(seed.inboxId, 'big.bin', 'application/octet-stream', Buffer.alloc(MAX_BYTES + 1));
    assert.equal(big.status, 413, JSON.stringify(big.body));
    assert.equal((await upload(other.inboxId, 'x.txt', 'text/plain', Buffer.from('x'))).status, 404);
    assert.equal((await upload('inb_unknown', 'x.txt', 'text/plain', Buffer.from('x'))).status, 404);
    assert.equal((await s.request('GET', `/v1/attachments/${file.body.id}`, { token: other.apiKey })).status, 404);
    const uploads = async () => (await s.app.db.selectFrom('inbox_uploads').select('id').orderBy('id').execute()).map((r) => r.id);
    assert.deepEqual(await uploads(), [picture.body.id, file.body.id].sort());
    // Another workspace cannot send them.
    const foreign = await s.request('POST', '/v1/conversations', {
      token: other.apiKey,
      body: { inbox_id: other.inboxId, to: ['uma@new.example'], subject: 'Hi', body: 'x', attachment_ids: [file.body.id] },
    });
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.equal(foreign.body.error.issues[0].path, 'attachment_ids.0');
    assert.deepEqual(await counts(), start);

    const r = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: {
        inbox_id: seed.inboxId,
        to: ['Uma <uma@new.example>'],
        subject: 'The contract',
        html: `<p>Signed: <img src="${picture.body.url}" alt="shot"></p>`,
        attachment_ids: [file.body.id, picture.body.id],
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const byName = new Map((r.body.message.attachments as { filename: string; id: string; inline: boolean }[]).map((a) => [a.filename, a]));
    assert.equal(byName.get('terms.txt')?.id, file.body.id);
    assert.equal(byName.get('terms.txt')?.inline, false);
    assert.equal(byName.get('shot.png')?.inline, true);
    assert.deepEqual(await uploads(), [], 'the uploads now belong to the conversation');
    const mail = await sendAll();
    assert.deepEqual(mail.to, ['uma@new.example']);
    const parts = new Map(mail.parsed.attachments.map((a) => [a.filename, a]));
    assert.equal(parts.get('terms.txt')?.content.toString(), 'The terms');
    assert.equal(parts.get('terms.txt')?.contentDisposition, 'attachment');
    assert.ok(parts.get('shot.png')?.content.equals(png));
    assert.equal(parts.get('shot.png')?.related, true, 'the picture is an inline part');
    assert.match(mail.raw.toString(), new RegExp(`Content-ID: <${picture.body.id}@svc>`, 'i'));
    const hooks = await webhooksFor('message.created', r.body.message.id);
    assert.deepEqual(hooks[0].p.data.message.attachments.map((a: { filename: string }) => a.filename).sort(), ['shot.png', 'terms.txt']);

    // Used once: naming it again is 400 and writes nothing.
    const before = await counts();
    const again = await s.request('POST', '/v1/conversations', {
      token: seed.apiKey,
      body: { inbox_id: seed.inboxId, to: ['uma@new.example'], subject: 'Again', body: 'x', attachment_ids: [file.body.id] },
    });
    assert.equal(again.status, 400, JSON.stringify(again.body));
    assert.equal(again.body.error.issues[0].path, 'attachment_ids.0');
    assert.deepEqual(await counts(), before);

    // An upload never sent goes after a day, with its file.
    const stray = await upload(seed.inboxId, 'stray.txt', 'text/plain', Buffer.from('stray'));
    clock.advance(25 * 60 * 60_000);
    await s.app.jobs.drain();
    assert.deepEqual(await uploads(), []);
    assert.equal((await s.request('GET', `/v1/attachments/${stray.body.id}`, { token: seed.apiKey })).status, 404);
  });

  test('bad new conversations: 404 for unknown or foreign inbox, channel and contact; 400 naming the field; 409 without an e-mail channel; nothing changes', async () => {
    const bare = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'No mail' });
    const otherInbox = await createInbox(s.app, { workspaceId: seed.workspaceId, name: 'Sales' });
    const salesChannel = await seedEmailChannel(s.app, { workspaceId: seed.workspaceId, inboxId: otherInbox.id }, { smtpPort: sink.port });
    const limited = (await createApiKey(s.app, { workspaceId: seed.workspaceId, name: 'sales only', inboxIds: [otherInbox.id] })).secret;
    const start = await counts();
    const many = Array.from({ length: 51 }, (_, i) => `p${i}@partner.example`);
    const post = (body: Record<string, unknown>, token = seed.apiKey) =>
      s.request('POST', '/v1/conversations', { token, body: { inbox_id: seed.inboxId, to: ['kim@new.example'], subject: 'Hi', body: 'Hello', ...body } });
    const cases: [Awaited<ReturnType<typeof post>>, number, string | null, string?][] = [
      [await post({ inbox_id: 'inb_unknown', to: many }), 404, null],
      [await post({ inbox_id: other.inboxId }), 404, null],
      [await post({ to: many }, limited), 404, null],
      [await post({ channel_id: 'ch_unknown' }), 404, null],
      [await post({ channel_id: salesChannel.id }), 400, 'channel_id'],
      [await post({ to: ['ct_unknown'] }), 404, null],
      [await post({ to: many }), 400, 'to'],
      [await post({ to: ['nope'] }), 400, 'to.0'],
      [await post({ cc: [`Us <${address}>`] }), 400, 'cc.0'],
      [await post({ subject: '  ' }), 400, 'subject'],
      [await post({ body: ' ' }), 400, 'body'],
      [await post({ inbox_id: bare.id }), 409, null, 'no_email_channel'],
      [await post({ attachment_ids: ['att_unknown'] }), 400, 'attachment_ids.0'],
    ];
    for (const [r, status, path, code] of cases) {
      assert.equal(r.status, status, JSON.stringify(r.body));
      if (path) assert.equal(r.body.error.issues[0].path, path, JSON.stringify(r.body));
      if (code) assert.equal(r.body.error.code, code);
    }
    assert.deepEqual(await counts(), start);
  });

  test('MCP: forward_message and start_conversation', async () => {
    const first = await inbound(rawMail({ From: 'lea@cust.example', Subject: 'Via MCP', 'Message-ID': '<m1-a@cust.example>' }));
    const mcp = await connectMcp(s, seed.apiKey);
    try {
      const f = await mcp.call('forward_message', {
        conversation_id: first.conversation_id,
        message_id: first.message_id,
        to: ['ops@partner.example'],
        note: 'See below',
      });
      assert.equal(f.isError, false, f.text);
      assert.equal(f.body.subject, 'Fwd: Via MCP');
      const fm = await sendAll();
      assert.deepEqual(fm.to, ['ops@partner.example']);
      const bad = await mcp.call('forward_message', { conversation_id: first.conversation_id, message_id: first.message_id, to: ['bad'] });
      assert.equal(bad.isError, true);
      assert.match(bad.text, /to\.0/);
      const n = await mcp.call('start_conversation', { inbox_id: seed.inboxId, to: ['mo@new.example'], subject: 'Hello Mo', body: 'Welcome.' });
      assert.equal(n.isError, false, n.text);
      assert.equal(n.body.conversation.status, 'pending');
      const nm = await sendAll();
      assert.equal(nm.parsed.subject, 'Hello Mo');
    } finally {
      await mcp.close();
    }
  });
});

async function until(check: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}
