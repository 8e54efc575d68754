// Issue 33: forwarding a message by mail (new conversations: new-conversation.test.ts). Inbound mail
// through the ingress, outbound caught by an smtp-server sink (envelope, headers and parts as sent),
// webhooks checked with standardwebhooks, answers threading back through the ingress; the scene is
// forward-scene.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createChatChannel } from '../../src/channels/service.js';
import { insertContact } from '../../src/contacts/service.js';
import { startConversation } from '../../src/conversations/service.js';
import { createInbox } from '../../src/inboxes/service.js';
import { rawMail } from '../helpers/mail.js';
import { sceneOf } from '../helpers/scene.js';
import { connectMcp } from '../mcp/helpers.js';
import { header, startForwardScene, stopForwardScene } from './forward-scene.js';

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

describe('forward by mail', () => {
  const scene = sceneOf(startForwardScene, stopForwardScene);

  test('a forward: Fwd: subject, quoted headers, note on top, attachments, multipart/alternative; Bcc only in the envelope; the answer threads back', async () => {
    const { s, seed, address, inbound, sendAll, webhooksFor } = scene();
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
    const { s, seed, inbound, sendAll } = scene();
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
    const { s, seed, inbound, sendAll, counts } = scene();
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
    const { s, seed, clock, sendAll } = scene();
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
    const { s, seed, other, address, inbound, counts } = scene();
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

  test('MCP: forward_message and start_conversation', async () => {
    const { s, seed, inbound, sendAll } = scene();
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
